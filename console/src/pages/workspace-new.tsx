import { useState } from 'preact/hooks';
import { post, seg } from '../api';
import { navigate } from '../route';
import { useSession } from '../session';
import { ErrorLine, Field, val } from '../ui';

/**
 * A new workspace of the license (POST /v1/licenses/{license}/workspaces):
 * for an Owner, or a session of a license-wide full or build key; the API
 * refuses anyone else and the error is shown. On success the session is read
 * again (it lists the new workspace) and the console opens its overview.
 */
export function NewWorkspaceForm(props: { licensePublicId: string }) {
  const { refresh } = useSession();
  const [name, setName] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const ws = await post<{ publicId: string }>(`/v1/licenses/${seg(props.licensePublicId)}/workspaces`, { name });
      await refresh();
      navigate(['w', ws.publicId, 'overview']);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="inline-form" data-testid="new-workspace" onSubmit={submit}>
      <Field label="New workspace" id="new-workspace-name" hint="A name for it (a team, an environment); it starts empty.">
        <input id="new-workspace-name" value={name} maxLength={100} onInput={(e) => setName(val(e))} />
      </Field>
      <button class="primary" type="submit" disabled={busy || name.trim() === ''}>Create workspace</button>
      <ErrorLine error={error} />
    </form>
  );
}
