import { useEffect, useId, useRef, type ReactNode } from 'react';

/**
 * A modal question (the native <dialog>: focus moves into it, Escape cancels, the page behind is inert); the
 * safe answer has the focus.
 */
export function Confirm({ open, title, children, confirmLabel, onConfirm, onCancel }: { open: boolean; title: string; children: ReactNode; confirmLabel: string; onConfirm(): void; onCancel(): void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const d = dialog.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog ref={dialog} onCancel={(e) => (e.preventDefault(), onCancel())} aria-labelledby={titleId}>
      <h2 id={titleId}>{title}</h2>
      <div>{children}</div>
      <div className="actions">
        <button type="button" autoFocus onClick={onCancel}>
          Cancel
        </button>
        <button type="button" className="danger" onClick={onConfirm}>
          {confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
