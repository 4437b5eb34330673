import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, session, type Who } from '../api';

/**
 * Sign-in with an API key, kept in sessionStorage. In development the server offers the key file
 * of the first run (GET /ui/dev-key answers only then, and only to this machine).
 */
export function SignInPage({ onSignedIn }: { onSignedIn: (who: Who) => void }) {
  const [key, setKey] = useState('');
  const [devKey, setDevKey] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    fetch('/ui/dev-key')
      .then((res) => (res.ok ? (res.json() as Promise<{ key: string }>) : null))
      .then((body) => setDevKey(body?.key ?? null))
      .catch(() => setDevKey(null));
  }, []);

  const signIn = async (candidate: string) => {
    setError(null);
    try {
      const who = await api<Who>('/api/v1/whoami', { key: candidate });
      session.signIn(candidate);
      onSignedIn(who);
    } catch (err) {
      setError(err instanceof ApiError ? `${err.code}: ${err.message}` : 'Parley did not answer.');
    }
  };

  return (
    <main class="sign-in">
      <h1>Parley</h1>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void signIn(key.trim());
        }}
      >
        <label for="api-key">API key</label>
        <input
          id="api-key"
          type="password"
          autoComplete="off"
          required
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
        />
        <button type="submit">Sign in</button>
      </form>
      {devKey && (
        <p>
          <button type="button" class="quiet" onClick={() => void signIn(devKey)}>
            Use the development admin key of the first run
          </button>
        </p>
      )}
      <p class="muted">The key stays in this tab (sessionStorage) and is sent only to this server.</p>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
    </main>
  );
}
