import { useEffect, useRef } from 'react';

/** A modal question with Confirm / Cancel; Escape cancels, focus starts on Cancel (the first button). */
export function Confirm({
  text,
  onConfirm,
  onCancel,
}: {
  text: string;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
  }, []);
  return (
    <dialog ref={ref} className="confirm" onCancel={onCancel} aria-label="Confirm">
      <p>{text}</p>
      <div className="row">
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="button" className="danger" onClick={onConfirm}>
          Confirm
        </button>
      </div>
    </dialog>
  );
}
