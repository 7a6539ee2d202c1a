import { type FormEvent, useState } from 'react';
import { ErrorBox } from '../../components/ErrorBox.tsx';
import { api } from '../../lib/api.ts';

/** Create an operator room (streams_create): it lives with no agent in it. */
export function CreateRoom({ onCreated }: { onCreated: (id: string) => void }) {
  const [name, setName] = useState('');
  const [error, setError] = useState<Error | null>(null);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    api<{ stream: { id: string } }>('POST', '/v1/streams', { name: name.trim() }).then(
      (r) => {
        setName('');
        setError(null);
        onCreated(r.stream.id);
      },
      (err: Error) => setError(err),
    );
  };
  return (
    <form className="inline" onSubmit={submit} aria-label="Create room">
      <input
        placeholder="new room name"
        value={name}
        onChange={(e) => setName(e.target.value)}
        aria-label="Room name"
      />
      <button type="submit" disabled={!name.trim()}>
        Create room
      </button>
      <ErrorBox error={error} />
    </form>
  );
}
