import assert from 'node:assert/strict';

/** A page as the console answered it. */
export interface ConsolePage {
  status: number;
  headers: Headers;
  html: string;
}

/** A browser-less console client: logged in with a token, it keeps the session cookie and the CSRF token. */
export interface ConsoleClient {
  cookie: string;
  csrf: string;
  get(path: string): Promise<ConsolePage>;
  /** a form POST; the session's CSRF token is added unless `csrf` is given (null: none at all) */
  post(path: string, fields?: Record<string, string>, csrf?: string | null): Promise<ConsolePage>;
}

async function page(response: Response): Promise<ConsolePage> {
  return { status: response.status, headers: response.headers, html: await response.text() };
}

/** Logs in to the console of the gex serve at `url` with `token` (POST /console/login). */
export async function consoleLogin(url: string, token: string): Promise<ConsoleClient> {
  const login = await fetch(`${url}/console/login`, {
    method: 'POST',
    body: new URLSearchParams({ token }),
    redirect: 'manual',
  });
  assert.equal(login.status, 303, await login.text());
  const cookie = /gex_console=[^;]+/.exec(login.headers.get('set-cookie') ?? '')?.[0];
  assert.ok(cookie, 'a session cookie');
  const jobs = await fetch(`${url}/console/jobs`, { headers: { cookie } });
  const csrf = /name="csrf" value="([^"]+)"/.exec(await jobs.text())?.[1];
  assert.ok(csrf, 'a CSRF token on the page');
  return {
    cookie,
    csrf,
    get: async (path) => page(await fetch(`${url}${path}`, { headers: { cookie }, redirect: 'manual' })),
    post: async (path, fields = {}, given) => {
      const body = new URLSearchParams(fields);
      const value = given === undefined ? csrf : given;
      if (value !== null) body.set('csrf', value);
      return page(await fetch(`${url}${path}`, { method: 'POST', headers: { cookie }, body, redirect: 'manual' }));
    },
  };
}
