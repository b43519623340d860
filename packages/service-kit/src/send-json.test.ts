// sendJson answers exactly as res.status().json() would, whichever path it takes.
import express from "express";
import request from "supertest";
import { sendJson } from "./send-json";

const value = { success: true, data: { id: "r1", name: "Zoë \u2603", notes: "x".repeat(1200) } };

function app(send: (req: express.Request, res: express.Response) => void): express.Express {
  const a = express();
  a.all("/", (req, res) => {
    if (req.query["etag"] !== undefined) res.setHeader("ETag", '"v1"');
    send(req, res);
  });
  return a;
}
const viaExpress = app((_req, res) => void res.status(Number(_req.query["status"] ?? 201)).json(value));
const viaSendJson = app((req, res) => sendJson(req, res, Number(req.query["status"] ?? 201), value));

const answer = (res: request.Response) => ({
  status: res.status,
  type: res.headers["content-type"],
  length: res.headers["content-length"],
  etag: res.headers["etag"],
  text: res.text,
});

describe("sendJson", () => {
  it.each([
    ["POST", "/?etag"],
    ["PATCH", "/?etag&status=200"],
    ["DELETE", "/?etag&status=200"],
    ["POST", "/"],
    ["GET", "/?status=200"],
    ["GET", "/?etag&status=200"],
    ["POST", "/?etag&status=204"],
  ])("answers %s %s as res.json does", async (method, path) => {
    const m = method.toLowerCase() as "post" | "patch" | "delete" | "get";
    const expected = answer(await request(viaExpress)[m](path));
    expect(answer(await request(viaSendJson)[m](path))).toEqual(expected);
    expect(expected.status).toBe(Number(new URLSearchParams(path.slice(2)).get("status") ?? 201));
  });

  it("leaves a conditional GET to Express: 304 on a matching If-None-Match", async () => {
    const first = await request(viaSendJson).get("/?status=200");
    expect(first.headers["etag"]).toMatch(/^W\//);
    await request(viaSendJson).get("/?status=200").set("if-none-match", first.headers["etag"]!).expect(304);
  });
});
