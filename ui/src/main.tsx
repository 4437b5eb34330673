import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, session, type Who } from './api';
import { CatalogPage } from './pages/catalog';
import { ConversationPage } from './pages/conversation';
import { ConversationsPage } from './pages/conversations';
import { HealthPage } from './pages/health';
import { SignInPage } from './pages/sign-in';
import { UsagePage } from './pages/usage';
import { BASE, navigate, onLink, usePath } from './router';
import './styles.css';

const PAGES = [
  { path: '/', label: 'Conversations' },
  { path: '/usage', label: 'Usage' },
  { path: '/catalog', label: 'Catalog' },
  { path: '/health', label: 'Health' },
];

function App() {
  const path = usePath();
  const [who, setWho] = useState<Who | null>(null);
  const [checking, setChecking] = useState(Boolean(session.key()));

  useEffect(() => {
    if (!session.key()) return;
    api<Who>('/api/v1/whoami')
      .then(setWho)
      .catch((err: unknown) => {
        if (err instanceof ApiError && err.status === 401) session.signOut();
      })
      .finally(() => setChecking(false));
  }, []);

  if (checking) return <p class="muted">Checking the key…</p>;
  if (!who) return <SignInPage onSignedIn={setWho} />;

  const signOut = () => {
    session.signOut();
    setWho(null);
    navigate('/');
  };
  const match = /^\/conversations\/([0-9a-f-]{36})$/.exec(path);
  const section = match ? '/' : path;
  return (
    <>
      <header class="top">
        <a class="brand" href={`${BASE}/`} onClick={onLink}>
          Parley
        </a>
        <nav aria-label="Pages">
          {PAGES.map((p) => (
            <a
              key={p.path}
              href={BASE + p.path}
              onClick={onLink}
              aria-current={section === p.path ? 'page' : undefined}
            >
              {p.label}
            </a>
          ))}
        </nav>
        <span class="who" data-testid="who">
          {who.subject} · {who.roles.join(', ')}
        </span>
        <button type="button" class="quiet" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main>
        {match ? (
          <ConversationPage id={match[1]} who={who} />
        ) : path === '/usage' ? (
          <UsagePage />
        ) : path === '/catalog' ? (
          <CatalogPage who={who} />
        ) : path === '/health' ? (
          <HealthPage />
        ) : (
          <ConversationsPage />
        )}
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
