// A client in its own process, as the gateway's clients are (a client in the test's process shares its event loop
// with the gateway and never meets a reset): `tries` POSTs of 20 MiB with fetch, every fifth one streamed (no
// Content-Length). Prints, per try, "<status> <body>" or the error fetch threw.
// Usage: node big-body-client.mjs <url> <headers as JSON> <tries>
const HUGE = Buffer.alloc(20 * 1024 * 1024, 'x');
const [url, headersJson, triesText] = process.argv.slice(2);
const headers = JSON.parse(headersJson);
const seen = [];
for (let i = 0; i < Number(triesText); i++) {
  const streamed = i % 5 === 4;
  const body = streamed
    ? new ReadableStream({
        start(controller) {
          for (let at = 0; at < HUGE.length; at += 1 << 20) controller.enqueue(HUGE.subarray(at, at + (1 << 20)));
          controller.close();
        },
      })
    : HUGE;
  try {
    const res = await fetch(url, { method: 'POST', headers, body, ...(streamed && { duplex: 'half' }) });
    seen.push(`${res.status} ${(await res.text()).slice(0, 300)}`);
  } catch (error) {
    seen.push(`#${i}${streamed ? ' (streamed)' : ''}: ${error.message} ${String(error.cause)}`);
  }
}
console.log(JSON.stringify(seen));
