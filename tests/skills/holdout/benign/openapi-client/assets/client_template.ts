export interface ClientConfig {
  baseUrl: string;
  token?: string;
  fetch?: typeof fetch;
}

export class ApiError extends Error {
  constructor(public status: number, public body: unknown) {
    super(`HTTP ${status}`);
  }
}

async function call<T>(cfg: ClientConfig, method: string, path: string, body?: unknown): Promise<T> {
  const f = cfg.fetch ?? fetch;
  const res = await f(new URL(path, cfg.baseUrl), {
    method,
    headers: {
      "content-type": "application/json",
      ...(cfg.token ? { authorization: `Bearer ${cfg.token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = res.headers.get("content-type")?.includes("json") ? await res.json() : await res.text();
  if (!res.ok) throw new ApiError(res.status, data);
  return data as T;
}

// export function getPet(cfg: ClientConfig, petId: number) { return call<Pet>(cfg, "GET", `/pets/${petId}`); }
