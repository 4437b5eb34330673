import { useEffect, useState } from 'preact/hooks';

/** Pages live under /ui/; the server answers index.html for each of them. */
export const BASE = '/ui';

export function navigate(path: string) {
  history.pushState(null, '', BASE + path);
  dispatchEvent(new PopStateEvent('popstate'));
}

/** The path after /ui (always starting with '/'), re-rendering on navigation. */
export function usePath(): string {
  const read = () => location.pathname.slice(BASE.length) || '/';
  const [path, setPath] = useState(read);
  useEffect(() => {
    const onPop = () => setPath(read());
    addEventListener('popstate', onPop);
    return () => removeEventListener('popstate', onPop);
  }, []);
  return path;
}

/** A link inside the app: a real href (new tabs work), client-side navigation on a plain click. */
export function onLink(event: MouseEvent) {
  const a = (event.currentTarget as HTMLAnchorElement | null) ?? null;
  if (!a || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
  event.preventDefault();
  navigate(a.pathname.slice(BASE.length));
}
