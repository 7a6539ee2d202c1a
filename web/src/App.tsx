import { lazy, Suspense, useEffect, useState } from 'react';
import { ErrorBoundary } from './components/ErrorBoundary.tsx';
import { ErrorBox } from './components/ErrorBox.tsx';
import { ApiError, api } from './lib/api.ts';
import { useGlobalKeys } from './lib/keys.ts';
import { LiveProvider, useLiveStatus } from './lib/live.tsx';
import { MeContext } from './lib/me.ts';
import { NeedsProvider, needCounts, useNeeds } from './lib/needs.tsx';
import { Link, useRoute } from './lib/router.tsx';
import { glyph } from './lib/state.ts';
import { saveTheme } from './lib/theme.ts';
import { Coordination } from './pages/Coordination.tsx';
import { Login } from './pages/Login.tsx';
import { Sessions } from './pages/Sessions.tsx';

// Pages past the first are loaded when opened: the first load ships only what it shows.
const SessionPage = lazy(() => import('./pages/SessionPage.tsx'));
const Tasks = lazy(() => import('./pages/Tasks.tsx'));
const TaskPage = lazy(() => import('./pages/TaskPage.tsx'));
const Inbox = lazy(() => import('./pages/Inbox.tsx'));
const Log = lazy(() => import('./pages/Log.tsx'));
const Chat = lazy(() => import('./pages/Chat.tsx'));
const Home = lazy(() => import('./pages/Home.tsx'));
const Schedules = lazy(() => import('./pages/Schedules.tsx'));
const Knowledge = lazy(() => import('./pages/Knowledge.tsx'));
const Timeline = lazy(() => import('./pages/Timeline.tsx'));

type Me = { operator: string; zone: string };

export function App() {
  const [me, setMe] = useState<Me | null | 'loading'>('loading');
  const [error, setError] = useState<Error | null>(null);
  const check = () =>
    api<Me>('GET', '/v1/ui/me').then(
      (m) => setMe(m),
      (e: Error) => {
        if (e instanceof ApiError && e.status === 401) setMe(null);
        else setError(e);
      },
    );
  // biome-ignore lint/correctness/useExhaustiveDependencies: once, on load
  useEffect(() => {
    void check();
  }, []);
  if (error) return <ErrorBox error={error} />;
  if (me === 'loading') return <p className="pad">Loading…</p>;
  if (!me) return <Login onLogin={() => void check()} />;
  return (
    <MeContext.Provider value={me.operator}>
      <LiveProvider>
        <NeedsProvider>
          <Shell me={me} onLogout={() => setMe(null)} />
        </NeedsProvider>
      </LiveProvider>
    </MeContext.Provider>
  );
}

function Shell({ me, onLogout }: { me: Me; onLogout: () => void }) {
  const { path, navigate } = useRoute();
  const status = useLiveStatus();
  const [dark, setDark] = useState(() => document.documentElement.dataset.theme === 'dark');
  useGlobalKeys();
  useEffect(() => {
    if (path === '/login') navigate('/', true);
    const m = /^\/chat\/(.+)$/.exec(path);
    if (m) navigate(`/coordination?stream=${encodeURIComponent(m[1] as string)}`, true);
  }, [path, navigate]);
  const toggleTheme = () => {
    const next = !dark;
    setDark(next);
    saveTheme(next ? 'dark' : 'light');
  };
  const logout = () => api('POST', '/v1/ui/logout').finally(onLogout);
  return (
    <div className="app">
      <header className="top">
        <strong className="brand">warren</strong>
        <nav aria-label="Pages">
          <Link to="/">Needs me</Link>
          <Link to="/sessions">Sessions</Link>
          <Link to="/tasks">Tasks</Link>
          <Link to="/inbox">Inbox</Link>
          <Link to="/coordination">Coordination</Link>
          <Link to="/schedules">Schedules</Link>
          <Link to="/knowledge">Knowledge</Link>
          <Link to="/log">Log</Link>
          <Link to="/chat">Chat</Link>
        </nav>
        <NeedCounts />
        <span className={`live live-${status}`} role="status" data-testid="live-status">
          {status === 'live' ? '● live' : status === 'reconnecting' ? '○ reconnecting…' : '○ connecting…'}
        </span>
        <span className="me">{me.operator}</span>
        <button type="button" onClick={toggleTheme} aria-label="Toggle dark mode">
          {dark ? '☀' : '☾'}
        </button>
        <button type="button" onClick={() => void logout()}>
          Log out
        </button>
      </header>
      <main>
        <Suspense fallback={<p className="pad">Loading…</p>}>
          <ErrorBoundary resetKey={path}>
            <Page path={path} />
          </ErrorBoundary>
        </Suspense>
      </main>
    </div>
  );
}

/** The header's counts of what waits for the operator, each a link to the home view. */
function NeedCounts() {
  const needs = useNeeds();
  const c = needCounts(needs);
  const items: [string, number, string][] = [
    ['open', c.escalations, 'open questions'],
    ['crashed', c.ended, 'crashed or over budget'],
    ['stuck', c.stuck, 'stuck'],
    ['review', c.review, 'in review'],
  ];
  const total = c.escalations + c.ended + c.stuck + c.review;
  return (
    <Link to="/" className={`needs${total ? ' needs-some' : ''}`}>
      <span data-testid="needs-count" data-total={total} data-loaded={needs.loaded}>
        <span className="sr-only">{total} things need you: </span>
        {items.map(([state, n, label]) => (
          <span key={state} className={`need-count status-${state}`} title={label} data-need={label}>
            <span aria-hidden="true">{glyph(state)}</span> {n}
          </span>
        ))}
      </span>
    </Link>
  );
}

function Page({ path }: { path: string }) {
  const seg = path.split('/').filter(Boolean);
  const id = seg[1] ? decodeURIComponent(seg[1]) : undefined;
  if (id && seg[2] === 'timeline') return <Timeline kind={seg[0] === 'tasks' ? 'task' : 'session'} id={id} />;
  switch (seg[0]) {
    case 'sessions':
      return id ? <SessionPage id={id} /> : <Sessions />;
    case 'tasks':
      return id ? <TaskPage id={id} /> : <Tasks />;
    case 'inbox':
      return <Inbox id={id} />;
    case 'schedules':
      return <Schedules id={id} />;
    case 'knowledge':
      return <Knowledge id={id} />;
    case 'coordination':
      return <Coordination />;
    case 'log':
      return <Log />;
    case 'chat':
      return <Chat />;
    default:
      return <Home />;
  }
}
