import { useState } from 'react';
import { Confirm } from '../../components/Confirm.tsx';
import { ErrorBox } from '../../components/ErrorBox.tsx';
import { api } from '../../lib/api.ts';
import type { Task } from '../../lib/types.ts';

type Act = 'start' | 'retry' | 'cancel' | 'approve';

const OPEN = new Set(['pending', 'ready', 'running', 'waiting', 'review']);

/** Which actions a task in this status offers: each one syscall (task_start, task_cancel, task_complete). */
export function taskActs(t: Pick<Task, 'status' | 'held'>): Act[] {
  const acts: Act[] = [];
  if (t.held && t.status === 'pending') acts.push('start');
  if (t.status === 'failed' || t.status === 'cancelled') acts.push('retry');
  if (t.status === 'review') acts.push('approve');
  if (OPEN.has(t.status)) acts.push('cancel');
  return acts;
}

const LABEL: Record<Act, string> = {
  start: 'Start',
  retry: 'Retry',
  cancel: 'Cancel task',
  approve: 'Approve',
};

/** Start / retry / approve at once; cancel (it stops sessions) behind a confirmation. */
export function TaskActions({ task, onDone }: { task: Task; onDone?: () => void }) {
  const [confirm, setConfirm] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const base = `/v1/tasks/${encodeURIComponent(task.id)}`;
  const run = (a: Act) =>
    api(
      'POST',
      a === 'approve' ? `${base}/complete` : a === 'cancel' ? `${base}/cancel` : `${base}/start`,
      {},
    ).then(
      () => {
        setError(null);
        onDone?.();
      },
      (e: Error) => setError(e),
    );
  const acts = taskActs(task);
  if (!acts.length) return null;
  return (
    <span className="actions inline-actions">
      {acts.map((a) => (
        <button
          key={a}
          type="button"
          className={a === 'cancel' ? 'danger' : undefined}
          onClick={() => (a === 'cancel' ? setConfirm(true) : void run(a))}
        >
          {LABEL[a]}
        </button>
      ))}
      <ErrorBox error={error} />
      {confirm ? (
        <Confirm
          text={`Cancel task “${task.title}” and the open tasks below it? Their sessions are stopped (SIGTERM).`}
          onCancel={() => setConfirm(false)}
          onConfirm={() => {
            setConfirm(false);
            void run('cancel');
          }}
        />
      ) : null}
    </span>
  );
}
