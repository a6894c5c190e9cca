import { z } from 'zod';
import type { Config } from '../../config.js';
import { jobFilter, jobInstanceFilter, jobName, jobRules } from '../../scheduler/scheduler-rules.js';
import * as op from '../../generated/graphql/graphql.js';
import { legacyPage, pageVariables } from './paging.js';
import { fieldRoute, rpcRoute, type RpcRoute } from './route.js';
import { data } from './answer-shape.js';

// Spec 4.2, the ten job scheduler paths. Jobs and instances answer as the LegacyJob / LegacyJobInstance fragments
// select them.

const byName = z.strictObject({ name: jobName });
const same = <T>(value: T) => ({ result: value });

export function schedulerRoutes(config: Config): RpcRoute[] {
  return [
    rpcRoute({
      area: 'scheduler',
      path: '/create',
      summary: 'Creates a job (ENABLED unless given); nextRunTime is its first occurrence after now.',
      params: jobRules.create,
      document: op.CreateJobDocument,
      variables: (p) => ({ input: p }),
      result: (d) => same(d.createJob),
      answer: { result: data('createJob') },
    }),
    fieldRoute({ area: 'scheduler', path: '/get', summary: 'Returns the job attributes.', params: byName, document: op.GetJobDocument, field: 'job' }),
    rpcRoute({
      area: 'scheduler',
      path: '/list',
      summary: 'Returns the jobs ordered by name, a page at a time; result is an array.',
      params: z.strictObject(legacyPage(config.MAX_PAGE_SIZE)),
      document: op.ListJobsDocument,
      variables: (p, env) => pageVariables(p, env.defaultPageSize),
      result: (d) => same(d.jobs.nodes),
      answer: { result: data('jobs', 'nodes') },
    }),
    fieldRoute({ area: 'scheduler', path: '/delete', summary: 'Deletes the job whose name is given, with its instances; returns it.', params: byName, document: op.DeleteJobDocument, field: 'deleteJob' }),
    fieldRoute({ area: 'scheduler', path: '/run', summary: 'Starts an instance of the job now (also while paused); returns the instance.', params: byName, document: op.RunJobDocument, field: 'runJob' }),
    rpcRoute({
      area: 'scheduler',
      path: '/update',
      summary: 'Changes a job; a new schedule or time zone recomputes nextRunTime.',
      params: jobRules.update.extend({ name: jobName }),
      document: op.UpdateJobDocument,
      variables: ({ name, ...input }) => ({ name, input }),
      result: (d) => same(d.updateJob),
      answer: { result: data('updateJob') },
    }),
    fieldRoute({ area: 'scheduler', path: '/pause', summary: 'Suspends the automatic start of a job; parameters under params or result.', params: byName, document: op.PauseJobDocument, field: 'pauseJob', paramsMayComeAsResult: true }),
    fieldRoute({ area: 'scheduler', path: '/resume', summary: 'Restores the automatic start of a job from the next occurrence after now.', params: byName, document: op.ResumeJobDocument, field: 'resumeJob' }),
    rpcRoute({
      area: 'scheduler',
      path: '/search',
      summary: 'Returns the jobs matching name prefix, status, target kind and queue; adds rowsCount.',
      params: jobFilter.extend(legacyPage(config.MAX_PAGE_SIZE)),
      document: op.SearchJobsDocument,
      variables: ({ pageSize, pageNumber, ...filter }, env) => ({ filter, ...pageVariables({ pageSize, pageNumber }, env.defaultPageSize) }),
      result: (d) => ({ result: d.jobs.nodes, rowsCount: d.jobs.totalCount }),
      answer: { result: data('jobs', 'nodes'), rowsCount: data('jobs', 'totalCount') },
    }),
    rpcRoute({
      area: 'scheduler',
      path: '/searchJobInstance',
      summary: 'Returns the job instances by job name, status, trigger and scheduled-time range [from, to), latest first; adds rowsCount.',
      params: jobInstanceFilter.extend(legacyPage(config.MAX_PAGE_SIZE)),
      document: op.SearchJobInstancesDocument,
      variables: ({ pageSize, pageNumber, from, to, ...filter }, env) => ({
        filter: { ...filter, ...(from && { from: from.toISOString() }), ...(to && { to: to.toISOString() }) },
        ...pageVariables({ pageSize, pageNumber }, env.defaultPageSize),
      }),
      result: (d) => ({ result: d.jobInstances.nodes, rowsCount: d.jobInstances.totalCount }),
      answer: { result: data('jobInstances', 'nodes'), rowsCount: data('jobInstances', 'totalCount') },
    }),
  ];
}
