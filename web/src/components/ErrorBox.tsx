import { ApiError } from '../lib/api.ts';

/** The server's typed error as it said it (code, message, request id), never a blank page. */
export function ErrorBox({ error }: { error: Error | null | undefined }) {
  if (!error) return null;
  const e = error instanceof ApiError ? error : null;
  return (
    <div role="alert" className="error">
      {e ? <code>{e.code}</code> : null} {error.message}
      {e?.requestId ? <small> (request {e.requestId})</small> : null}
    </div>
  );
}
