// The Rapport API as the explorer calls it: the key travels in the Authorization header only, never in a URL.

export class ApiError extends Error {
  constructor(status, error, message) {
    super(message);
    this.status = status;
    this.error = error;
  }
}

// Where the page itself is served from, before its `/explorer/` folder: the API of the same server. Locally that is
// the origin root; in AWS it is the stage (`/prod`), which a path relative to the root would miss.
export function ownBase(pathname = location.pathname) {
  const folder = pathname.lastIndexOf("/explorer/");
  return folder > 0 ? pathname.slice(0, folder) : "";
}

export class Api {
  constructor(base, key) {
    this.base = (base || ownBase()).replace(/\/+$/, "");
    this.key = key;
  }

  async call(method, path, { query, body } = {}) {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query || {})) {
      if (value !== undefined && value !== null && value !== "") params.set(name, String(value));
    }
    const search = params.toString();
    const headers = { Authorization: `Bearer ${this.key}`, Accept: "application/json" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let response;
    try {
      response = await fetch(`${this.base}${path}${search ? `?${search}` : ""}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        cache: "no-store",
        referrerPolicy: "no-referrer",
      });
    } catch (failure) {
      throw new ApiError(0, "unreachable", `the API at ${new URL(this.base || "/", location.href).href} did not answer (${failure.message})`);
    }
    const text = await response.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = null;
    }
    if (!response.ok) {
      const message = data && typeof data.message === "string" ? data.message : `HTTP ${response.status}`;
      throw new ApiError(response.status, (data && data.error) || "http_error", message);
    }
    return data;
  }

  user(userId) {
    return `/v1/users/${encodeURIComponent(userId)}`;
  }
}
