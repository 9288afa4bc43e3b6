import type { ComponentChildren, JSX } from 'preact';
import { useState } from 'preact/hooks';
import { errorText } from './api';

/** A labelled form field with the API's problem for it shown right under it. */
export function Field(props: { label: string; id: string; error?: string | undefined; hint?: string; children: ComponentChildren }) {
  return (
    <div class={`field${props.error ? ' has-error' : ''}`}>
      <label for={props.id}>{props.label}</label>
      {props.children}
      {props.hint && <small class="hint">{props.hint}</small>}
      {props.error && <p class="error" role="alert" id={`${props.id}-error`}>{props.error}</p>}
    </div>
  );
}

export function ErrorLine(props: { error: unknown }) {
  if (!props.error) return null;
  return <p class="error" role="alert">{errorText(props.error)}</p>;
}

export function Loading() {
  return <p class="muted" aria-live="polite">Loading…</p>;
}

/** A button that runs an async action, disables itself meanwhile and shows its error beside it. */
export function ActionButton(props: {
  label: string;
  run: () => Promise<unknown>;
  disabled?: boolean;
  kind?: 'primary' | 'danger' | 'plain';
  confirm?: string;
  testid?: string;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const click = async () => {
    if (props.confirm && !window.confirm(props.confirm)) return;
    setBusy(true);
    setError(null);
    try {
      await props.run();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <span class="action">
      <button type="button" class={props.kind ?? 'plain'} disabled={props.disabled || busy} onClick={click} data-testid={props.testid}>
        {props.label}
      </button>
      {error ? <span class="error" role="alert">{errorText(error)}</span> : null}
    </span>
  );
}

/** A secret shown once, with a copy button; it lives only in this component's state. */
export function SecretOnce(props: { label: string; value: string; onDone: () => void; also?: { label: string; value: string } }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.value);
      setCopied(true);
    } catch {
      // No clipboard permission (e.g. http on another host): the value stays selectable.
      setCopied(false);
    }
  };
  return (
    <div class="secret" role="status">
      <p>
        <strong>{props.label}</strong> — shown once; copy it now, it cannot be shown again.
      </p>
      <code class="secret-value" data-testid="secret-value">{props.value}</code>
      {props.also && (
        <p>
          {props.also.label}: <code class="secret-value" data-testid="secret-also">{props.also.value}</code>
        </p>
      )}
      <div class="row">
        <button type="button" onClick={copy}>{copied ? 'Copied' : 'Copy'}</button>
        <button type="button" onClick={props.onDone}>Done</button>
      </div>
    </div>
  );
}

export function Tabs(props: { tabs: Array<{ id: string; label: string; href: string }>; active: string }) {
  return (
    <nav class="tabs" aria-label="Sections">
      {props.tabs.map((t) => (
        <a key={t.id} href={t.href} class={t.id === props.active ? 'active' : ''} aria-current={t.id === props.active ? 'page' : undefined}>
          {t.label}
        </a>
      ))}
    </nav>
  );
}

export function Badge(props: { value: string; title?: string }) {
  return <span class={`badge badge-${props.value.replace(/[^a-z]/gi, '').toLowerCase()}`} title={props.title}>{props.value}</span>;
}

export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

export type InputEvent = JSX.TargetedEvent<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement, Event>;
export const val = (e: InputEvent) => e.currentTarget.value;
export const checked = (e: JSX.TargetedEvent<HTMLInputElement, Event>) => e.currentTarget.checked;
