import { ErrorBox } from '../../components/ErrorBox.tsx';
import { ApiError, api, qs } from '../../lib/api.ts';
import { useLiveRefetch } from '../../lib/live.tsx';
import { useFetch } from '../../lib/useFetch.ts';

interface Workpad {
  body: string;
  version: number;
  updatedBy: string | null;
  updatedAt: number | null;
}
interface Finding {
  id: string;
  title: string;
  body: string;
  tags: string[];
  session: string | null;
  createdAt: number;
}

/** The plugin is off: its routes answer not_found naming it; say so instead of an error. */
const off = (e: Error | null) => e instanceof ApiError && e.status === 404 && /knowledge/.test(e.message);

/** A task's workpad and the findings filed under it (the knowledge plugin), live. */
export function TaskKnowledge({ id }: { id: string }) {
  const pad = useFetch(
    () => api<{ workpad: Workpad }>('GET', `/v1/tasks/${encodeURIComponent(id)}/workpad`),
    [id],
  );
  const found = useFetch(
    () => api<{ findings: Finding[] }>('GET', `/v1/knowledge${qs({ task: id, limit: 50 })}`),
    [id],
  );
  useLiveRefetch(
    (e) => e.type.startsWith('knowledge.') || e.type.startsWith('workpad.'),
    () => {
      pad.reload();
      found.reload();
    },
  );
  if (off(pad.error) || off(found.error)) return <p className="muted">The knowledge plugin is off.</p>;
  const w = pad.data?.workpad;
  const findings = found.data?.findings ?? [];
  return (
    <section aria-label="Knowledge">
      <h3>Workpad {w ? <small className="muted">version {w.version}</small> : null}</h3>
      <ErrorBox error={pad.error} />
      {w ? w.version === 0 ? <p className="muted">empty</p> : <pre className="block">{w.body}</pre> : null}
      <h3>Findings</h3>
      <ErrorBox error={found.error} />
      <ul>
        {findings.length ? (
          findings.map((f) => (
            <li key={f.id}>
              <strong>{f.title}</strong>{' '}
              {f.tags.length ? <small className="muted">[{f.tags.join(', ')}]</small> : null}
              <div className="muted">{f.body.length > 400 ? `${f.body.slice(0, 400)}…` : f.body}</div>
            </li>
          ))
        ) : (
          <li className="muted">none</li>
        )}
      </ul>
    </section>
  );
}
