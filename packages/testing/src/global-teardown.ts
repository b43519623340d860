import { removeFixtures } from "./fixtures-run";

export default async function globalTeardown(): Promise<void> {
  await removeFixtures();
  await globalThis.__crmInfra?.stop();
}
