import type { Request } from "express";
import { defineRoute, z } from "@crm/contracts";
import { isAppError } from "@crm/errors";
import { requestBody } from "./routes";

const withBody = defineRoute({
  method: "POST",
  path: "/thing",
  service: "crm-records",
  permission: "clients.create",
  body: { schema: z.object({ name: z.string() }).strict(), required: true },
});
const req = (body: unknown) => ({ body }) as Request;

describe("requestBody", () => {
  it("validates the body with the schema the route declares; no body counts as {}", () => {
    expect(requestBody(withBody, req({ name: "a" }))).toEqual({ name: "a" });
    for (const body of [undefined, { name: 1 }, { name: "a", extra: true }]) {
      let thrown: unknown;
      try {
        requestBody(withBody, req(body));
      } catch (err) {
        thrown = err;
      }
      expect(isAppError(thrown) && thrown.code).toBe(400001);
    }
  });
});
