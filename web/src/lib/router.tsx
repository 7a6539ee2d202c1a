import { createContext, type MouseEvent, type ReactNode, useContext, useEffect, useState } from 'react';

/** A small history router: the pages are few and flat, no library needed. */
interface Loc {
  path: string;
  search: URLSearchParams;
  navigate(to: string, replace?: boolean): void;
}

const RouterContext = createContext<Loc | null>(null);

export function Router({ children }: { children: ReactNode }) {
  const [href, setHref] = useState(() => window.location.pathname + window.location.search);
  useEffect(() => {
    const onPop = () => setHref(window.location.pathname + window.location.search);
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);
  const url = new URL(href, window.location.origin);
  const navigate = (to: string, replace = false) => {
    if (replace) window.history.replaceState(null, '', to);
    else window.history.pushState(null, '', to);
    setHref(to);
  };
  return (
    <RouterContext.Provider value={{ path: url.pathname, search: url.searchParams, navigate }}>
      {children}
    </RouterContext.Provider>
  );
}

export function useRoute(): Loc {
  const r = useContext(RouterContext);
  if (!r) throw new Error('useRoute outside Router');
  return r;
}

export function Link({ to, children, className }: { to: string; children: ReactNode; className?: string }) {
  const { navigate, path } = useRoute();
  const onClick = (e: MouseEvent) => {
    if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
    e.preventDefault();
    navigate(to);
  };
  const active = path === to || (to !== '/' && path.startsWith(`${to}/`));
  return (
    <a href={to} onClick={onClick} className={className} aria-current={active ? 'page' : undefined}>
      {children}
    </a>
  );
}
