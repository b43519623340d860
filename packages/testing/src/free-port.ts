import net from "node:net";

/**
 * Where freePort looks: below Linux's ephemeral range (32768-60999 by default), from which the kernel
 * gives ports both to `listen(0)` and to every outgoing connection. A port asked of the kernel that way
 * and closed again can be handed out again at once: to another test file's freePort (jest runs files
 * in parallel), so two products were started on one port, and one test talked to the other's process;
 * or to a connection made meanwhile, so the child could not listen (EADDRINUSE).
 */
const FIRST_PORT = 20_000;
const LAST_PORT = 32_000;
const ATTEMPTS = 100;

/** Whether a listener can be opened on `port` now (it is closed again before this answers). */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** A loopback port free at the moment of asking, for a child process to listen on: a random one, tried first. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const port = FIRST_PORT + Math.floor(Math.random() * (LAST_PORT - FIRST_PORT));
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port between ${FIRST_PORT} and ${LAST_PORT} after ${ATTEMPTS} tries`);
}
