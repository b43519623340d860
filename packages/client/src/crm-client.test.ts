import { createCrmClient, type CrmClient } from "./crm-client";

/** A fetch that records the Request openapi-fetch built and answers with a canned JSON response. */
function fakeFetch(status: number, body: unknown) {
  const requests: Request[] = [];
  const fetch = async (request: Request) => {
    requests.push(request);
    return new Response(body === undefined ? null : JSON.stringify(body), { status, headers: body === undefined ? {} : { "content-type": "application/json" } });
  };
  return { fetch, requests };
}

const meta = { total: 1, lastPage: 1, currentPage: 1, perPage: 10, prev: null, next: null };

describe("createCrmClient", () => {
  it("builds the URL from the path template, path params and query, and sends the access token", async () => {
    const { fetch, requests } = fakeFetch(200, { success: true, data: [], meta });
    const api = createCrmClient({ baseUrl: "http://crm.test/", accessToken: "jwt-1", fetch });
    const { data, error, response } = await api.GET("/api/v1/webhook/{id}/deliveries", {
      params: { path: { id: "wh 1" }, query: { page: 2, perPage: 5 } },
    });
    expect(error).toBeUndefined();
    expect(response.status).toBe(200);
    expect(data?.meta.total).toBe(1);
    const [request] = requests;
    const url = new URL(request!.url);
    expect(url.origin + url.pathname).toBe("http://crm.test/api/v1/webhook/wh%201/deliveries");
    expect(url.searchParams.get("page")).toBe("2");
    expect(url.searchParams.get("perPage")).toBe("5");
    expect(request!.method).toBe("GET");
    expect(request!.headers.get("authorization")).toBe("Bearer jwt-1");
    expect(request!.headers.get("x-api-key")).toBeNull();
    expect(request!.headers.get("accept")).toBe("application/json");
  });

  it("sends a JSON body and an API key, and types the error envelope of a failure", async () => {
    const { fetch, requests } = fakeFetch(409, { success: false, error: { code: 409002, message: "Idempotency key reused with a different request" } });
    const api = createCrmClient({ baseUrl: "http://crm.test", apiKey: "svc_abc", fetch });
    const { data, error } = await api.POST("/api/v1/client", {
      body: { firstName: "Grace", lastName: "Hopper" },
      headers: { "idempotency-key": "k-1" },
    });
    expect(data).toBeUndefined();
    expect(error?.error.code).toBe(409002);
    const [request] = requests;
    expect(request!.method).toBe("POST");
    expect(request!.headers.get("x-api-key")).toBe("svc_abc");
    expect(request!.headers.get("authorization")).toBeNull();
    expect(request!.headers.get("idempotency-key")).toBe("k-1");
    expect(request!.headers.get("content-type")).toBe("application/json");
    expect(await request!.json()).toEqual({ firstName: "Grace", lastName: "Hopper" });
  });

  it("asks a token function on every request, and leaves explicit credentials alone", async () => {
    const { fetch, requests } = fakeFetch(204, undefined);
    let n = 0;
    const api = createCrmClient({ baseUrl: "http://crm.test", accessToken: async () => `jwt-${++n}`, fetch });
    await api.POST("/api/v1/auth/logout");
    await api.POST("/api/v1/auth/logout");
    await api.POST("/api/v1/auth/logout", { headers: { authorization: "Bearer mine" } });
    expect(requests.map((r) => r.headers.get("authorization"))).toEqual(["Bearer jwt-1", "Bearer jwt-2", "Bearer mine"]);
  });

  it("sends no credentials when it has none, and refuses both at once", async () => {
    const { fetch, requests } = fakeFetch(200, { success: true, data: {} });
    await createCrmClient({ baseUrl: "http://crm.test", fetch }).GET("/api/v1/capabilities");
    expect(requests[0]!.headers.get("authorization")).toBeNull();
    expect(requests[0]!.headers.get("x-api-key")).toBeNull();
    expect(() => createCrmClient({ baseUrl: "http://crm.test", accessToken: "a", apiKey: "svc_b" })).toThrow(TypeError);
  });

  it("rejects undocumented paths, methods, params and bodies at compile time", () => {
    // Never called: `pnpm typecheck` checks these lines; jest only checks they compile to something.
    const typeChecks = (api: CrmClient) => [
      // @ts-expect-error: no such path
      api.GET("/api/v1/clients"),
      // @ts-expect-error: the path exists, but not with PUT
      api.PUT("/api/v1/client"),
      // @ts-expect-error: a path parameter is required
      api.GET("/api/v1/client/{id}", {}),
      // @ts-expect-error: lastName is required
      api.POST("/api/v1/client", { body: { firstName: "Grace" } }),
      // @ts-expect-error: unknown event name
      api.POST("/api/v1/webhook", { body: { url: "https://example.test", events: ["client.exploded"] } }),
      api.GET("/api/v1/client/{id}", { params: { path: { id: "x" } } }).then(({ data }) => {
        // @ts-expect-error: no such field on Client
        return data?.data.nickname;
      }),
    ];
    expect(typeof typeChecks).toBe("function");
  });
});
