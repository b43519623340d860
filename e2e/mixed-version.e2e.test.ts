// Independent deploys (issue 38 item 2): each service of the previous release, built and started as
// production starts it, beside the current release of the others, on the schema this checkout's
// migrations make (a rolling upgrade migrates first). One service at a time, as a rolling deploy
// leaves it: the current product's process of that service is restarted on the previous release,
// the flow every pair of neighbouring releases must keep runs (sign-up, an API key, records, a list
// with where and include, signed webhooks), and the process is restarted on the current release again.
// The previous release: e2e/previous-release.ts.
import { describeDistributed } from "@crm/testing";
import { startDistributed, type RunningDistributed } from "./harness";
import { runMixedVersionFlow } from "./mixed-version.flow";
import { buildOf, previousVersions, SERVICE_NAMES, type ServiceName, servicesByCommit } from "./previous-release";

const versions = previousVersions();
const describeMixed: jest.Describe = versions ? describeDistributed : describe.skip;
if (!versions) console.warn("mixed-version e2e skipped: no previous release in this clone's history (no v* tag, no earlier commit)");

describeMixed("mixed versions: one service of the previous release beside the current others (distributed mode)", () => {
  jest.setTimeout(600_000);
  let product: RunningDistributed;
  const folders = new Map<string, string>();
  beforeAll(async () => {
    // The product and the previous builds (each distinct commit once, with the services taken from it) are made side by side.
    const builds = [...servicesByCommit(versions!)].map(async ([commit, services]) => folders.set(commit, await buildOf(commit, services)));
    // Four flows sign up and in from one address: with the builds cached they ran faster than 50 a minute (429).
    const [started] = await Promise.all([startDistributed({ RATE_LIMIT_MAX: "100000" }), ...builds]);
    product = started as RunningDistributed;
  }, 900_000);
  afterAll(async () => {
    await product?.stop();
  });

  it.each(SERVICE_NAMES.map((service) => [service, versions![service].label] as const))("%s of the previous release (%s)", async (service: ServiceName) => {
    const replica = product.processes.find((p) => p.label === service)!;
    await replica.restart(`${folders.get(versions![service].commit)}/services/${service}`);
    try {
      await runMixedVersionFlow(product.baseUrl, `${service}-${Date.now()}`);
    } catch (err) {
      throw new Error(`${service} of ${versions![service].label} beside the current others: ${(err as Error).message}\n--- logs ---\n${product.logs().slice(-4000)}`);
    } finally {
      await replica.restart(`services/${service}`);
    }
  });
});
