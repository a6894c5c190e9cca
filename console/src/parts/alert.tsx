import type { ReactNode } from 'react';

/** A message the page announces (role=alert): a refusal, with the gateway's own words. */
export function Alert({ children, onClose }: { children: ReactNode; onClose?: () => void }) {
  return (
    <div className="alert" role="alert">
      <span>{children}</span>
      {onClose && (
        <button type="button" className="link" onClick={onClose} aria-label="Dismiss">
          ×
        </button>
      )}
    </div>
  );
}
