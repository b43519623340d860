// Starts a peer module as a child process on this machine and waits for the address it prints.
import { spawn } from "node:child_process";
import path from "node:path";

const TSX = path.resolve(__dirname, "../../node_modules/.bin/tsx");

export async function spawnPeer(script: string, args: string[]): Promise<{ url: string; pid: number; close(): Promise<void> }> {
  const child = spawn(TSX, [path.join(__dirname, script), ...args], { stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`${script} did not start`)), 60_000);
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      const line = out.split("\n")[0];
      if (out.includes("\n") && line) {
        clearTimeout(timer);
        resolve(line.trim());
      }
    });
    child.once("exit", (code) => reject(new Error(`${script} exited with code ${code}`)));
  });
  return {
    url,
    pid: child.pid!,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}
