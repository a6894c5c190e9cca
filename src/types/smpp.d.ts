// Minimal declarations for smpp 0.5 (farhadi/node-smpp), covering what the gateway and its tests use.
declare module 'smpp' {
  import type { EventEmitter } from 'node:events';
  import type { Server as NetServer, Socket } from 'node:net';

  export type PduFields = Record<string, unknown>;

  export class PDU {
    constructor(command: string, options?: PduFields);
    command: string;
    command_id: number;
    command_status: number;
    sequence_number: number;
    isResponse(): boolean;
    response(options?: PduFields): PDU;
    [field: string]: unknown;
  }

  export interface SessionOptions {
    host?: string;
    port?: number;
    url?: string;
    tls?: boolean;
    auto_enquire_link_period?: number;
    socket?: Socket;
    [option: string]: unknown;
  }

  export type PduCallback = (pdu: PDU) => void;

  export class Session extends EventEmitter {
    constructor(options: SessionOptions);
    socket: Socket;
    server?: Server;
    send(pdu: PDU, responseCallback?: PduCallback, sendCallback?: PduCallback): boolean;
    pause(): void;
    resume(): void;
    close(callback?: () => void): void;
    destroy(callback?: () => void): void;
    bind_transceiver(options: PduFields, responseCallback?: PduCallback): boolean;
    submit_sm(options: PduFields, responseCallback?: PduCallback): boolean;
    enquire_link(options?: PduFields, responseCallback?: PduCallback): boolean;
    unbind(options?: PduFields, responseCallback?: PduCallback): boolean;
    deliver_sm(options: PduFields, responseCallback?: PduCallback): boolean;
  }

  export class Server extends NetServer {
    sessions: Session[];
  }

  export interface Encoding {
    match(value: string): boolean;
    encode(value: string): Buffer;
    decode(value: Buffer): string;
  }

  export const encodings: { detect(value: string): string | false; default: string } & Record<string, Encoding>;

  export function connect(options: SessionOptions, listener?: () => void): Session;
  export function createServer(listener?: (session: Session) => void): Server;
  export function createServer(options: Record<string, unknown>, listener?: (session: Session) => void): Server;

  export const ESME_ROK: number;
  export const ESME_RTHROTTLED: number;
  export const ESME_RMSGQFUL: number;
  export const ESME_RBINDFAIL: number;
  export const ESME_RINVPASWD: number;
  export const ESME_RINVSYSID: number;
  export const ESME_RINVDSTADR: number;
  export const errors: Record<string, number>;
}
