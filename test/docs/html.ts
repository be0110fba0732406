/**
 * Just enough HTML parsing for a link check of the built documentation site: the start tags of a
 * page with their attributes (comments, scripts and styles skipped, entities decoded), the link
 * targets (`a[href]`, `img[src]`, `link[href]`) and every element `id`.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

export interface HtmlPage {
  /** `href`/`src` values as written, without `javascript:` and pure `#` placeholders. */
  readonly links: readonly string[];
  readonly ids: ReadonlySet<string>;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name.startsWith('#x') || name.startsWith('#X')) return String.fromCodePoint(Number.parseInt(name.slice(2), 16));
    if (name.startsWith('#')) return String.fromCodePoint(Number.parseInt(name.slice(1), 10));
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}

const START_TAG = /<([a-zA-Z][\w-]*)((?:\s+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*)\s*\/?>/g;
const ATTRIBUTE = /([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;

/** Every start tag of the document, in order, with its attributes. */
export function startTags(html: string): { name: string; attributes: Map<string, string> }[] {
  const markup = html
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/<script\b[\s\S]*?<\/script>/gi, '')
    .replace(/<style\b[\s\S]*?<\/style>/gi, '');
  const tags: { name: string; attributes: Map<string, string> }[] = [];
  for (const tag of markup.matchAll(START_TAG)) {
    const attributes = new Map<string, string>();
    for (const attribute of (tag[2] ?? '').matchAll(ATTRIBUTE)) {
      const value = attribute[2] ?? attribute[3] ?? attribute[4] ?? '';
      attributes.set((attribute[1] as string).toLowerCase(), decodeEntities(value));
    }
    tags.push({ name: (tag[1] as string).toLowerCase(), attributes });
  }
  return tags;
}

export function readHtmlPage(file: string): HtmlPage {
  const links: string[] = [];
  const ids = new Set<string>();
  for (const { name, attributes } of startTags(readFileSync(file, 'utf8'))) {
    const id = attributes.get('id');
    if (id) ids.add(id);
    const target =
      name === 'img' ? attributes.get('src') : name === 'a' || name === 'link' ? attributes.get('href') : undefined;
    if (target === undefined || target === '' || target === '#' || target.startsWith('javascript:')) continue;
    links.push(target);
  }
  return { links, ids };
}

/**
 * The file a static host with clean URLs serves for a path of the site, or undefined:
 * `/guide/x` and `/guide/x.html` are `guide/x.html`, `/api/` is `api/index.html`, and other
 * files (`/assets/app.js`, `/dashboard.png`) are themselves.
 */
export function fileForUrlPath(root: string, urlPath: string): string | undefined {
  const relative = path.normalize(urlPath).replace(/^([/\\])+/, '');
  if (relative.startsWith('..')) return undefined;
  const base = path.join(root, relative);
  const candidates = urlPath.endsWith('/')
    ? [path.join(base, 'index.html')]
    : [base, `${base}.html`, path.join(base, 'index.html')];
  return candidates.find((candidate) => existsSync(candidate) && statSync(candidate).isFile());
}
