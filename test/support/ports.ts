import { createServer } from 'node:net';

// Below Linux's ephemeral range (32768-60999 by default): a port the OS hands out for a listen(0)
// or an outgoing connection can be taken again by any other connection between the probe and the
// process that listens on it, and the suite opens thousands. One picked here is only ever taken by
// a test that names it.
const LOW = 20_000;
const HIGH = 32_768;

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '0.0.0.0', () => probe.close(() => resolve(true)));
  });
}

/** A TCP port no one listens on, for a process the test starts and tells which port to take. */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW));
    if (await bindable(port)) return port;
  }
}
