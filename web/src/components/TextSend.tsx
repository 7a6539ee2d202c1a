import { type FormEvent, useState } from 'react';

/**
 * One line of text and its button (send a message, answer, post): the text clears once `send`
 * succeeds and stays when it fails, so nothing typed is lost to an error.
 */
export function TextSend({
  label,
  placeholder,
  button,
  disabled = false,
  send,
}: {
  label: string;
  placeholder: string;
  button: string;
  disabled?: boolean;
  /** Resolves true when the text went. */
  send: (text: string) => Promise<boolean>;
}) {
  const [text, setText] = useState('');
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!text.trim() || disabled) return;
    void send(text).then((ok) => ok && setText(''));
  };
  return (
    <form className="inline" onSubmit={submit}>
      <input
        aria-label={label}
        placeholder={placeholder}
        value={text}
        onChange={(e) => setText(e.target.value)}
      />
      <button type="submit" disabled={!text.trim() || disabled}>
        {button}
      </button>
    </form>
  );
}

/** What `send` resolves to for a call: true when it went (the error cleared), false when it failed (shown). */
export const outcome = (p: Promise<unknown>, setError: (e: Error | null) => void): Promise<boolean> =>
  p.then(
    () => {
      setError(null);
      return true;
    },
    (e: Error) => {
      setError(e);
      return false;
    },
  );
