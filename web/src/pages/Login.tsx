import { type FormEvent, useEffect, useState } from 'react';
import { ErrorBox } from '../components/ErrorBox.tsx';
import { api } from '../lib/api.ts';

/** Paste an operator key, or arrive by the one-time link `warren serve` printed (#token=…). */
export function Login({ onLogin }: { onLogin: () => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<Error | null>(null);
  const login = (body: { key: string } | { token: string }) =>
    api('POST', '/v1/ui/login', body).then(
      () => {
        if (window.location.pathname === '/login') window.history.replaceState(null, '', '/');
        onLogin();
      },
      (e: Error) => setError(e),
    );
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs once, on arrival by the link
  useEffect(() => {
    const m = /token=([^&]+)/.exec(window.location.hash);
    if (m) {
      // The token leaves the address bar at once: it is single-use and should not linger in history.
      window.history.replaceState(null, '', window.location.pathname);
      void login({ token: decodeURIComponent(m[1] as string) });
    }
  }, []);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void login({ key: key.trim() });
  };
  return (
    <form className="login" onSubmit={submit}>
      <h1>warren</h1>
      <label>
        Operator key
        <input
          type="password"
          name="key"
          autoComplete="current-password"
          placeholder="wk_…"
          value={key}
          onChange={(e) => setKey(e.target.value)}
        />
      </label>
      <button type="submit">Log in</button>
      <p className="hint">
        The key is in <code>.warren/operator.key</code>; <code>warren serve</code> also prints a one-time
        login link.
      </p>
      <ErrorBox error={error} />
    </form>
  );
}
