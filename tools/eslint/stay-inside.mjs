import path from 'node:path';

/**
 * `parley/stay-inside`: a relative import never leaves the library (`libs/<name>/`) or app
 * (`apps/<name>/`) it is written in. Another library is reached through its barrel,
 * `@parley/<name>`, so its insides stay its own; an app reaches nothing of another app.
 * The repository's own root files (`package.json`, `migrations/`) belong to no library and stay
 * reachable.
 */
const ROOT = path.resolve(import.meta.dirname, '..', '..');
const SHARED_ROOT_FILES = ['package.json', 'migrations'];

/** `libs/event-store` for a file in it; null outside libs/ and apps/. */
function unitOf(file) {
  const [kind, name] = path.relative(ROOT, file).split(path.sep);
  return (kind === 'libs' || kind === 'apps') && name ? `${kind}/${name}` : null;
}

export const stayInside = {
  meta: {
    type: 'problem',
    docs: { description: 'a relative import stays inside its own library or app' },
    schema: [],
    messages: {
      otherLib: "'{{source}}' reaches into {{target}}: import '@parley/{{name}}' (add to its barrel what is missing).",
      outside: "'{{source}}' leaves {{unit}}: only '@parley/*' and packages reach outside it.",
    },
  },
  create(context) {
    const file = context.physicalFilename;
    const unit = unitOf(file);
    if (!unit) return {};
    const check = (node) => {
      const source = node?.type === 'Literal' && typeof node.value === 'string' ? node.value : null;
      if (!source || !source.startsWith('.')) return;
      const target = path.relative(ROOT, path.resolve(path.dirname(file), source));
      if (target === unit || target.startsWith(`${unit}/`)) return;
      if (SHARED_ROOT_FILES.some((f) => target === f || target.startsWith(`${f}/`))) return;
      const [kind, name] = target.split('/');
      if (kind === 'libs' && name)
        context.report({ node, messageId: 'otherLib', data: { source, target: `libs/${name}`, name } });
      else context.report({ node, messageId: 'outside', data: { source, unit } });
    };
    return {
      ImportDeclaration: (node) => check(node.source),
      ExportNamedDeclaration: (node) => check(node.source),
      ExportAllDeclaration: (node) => check(node.source),
      ImportExpression: (node) => check(node.source),
      TSImportEqualsDeclaration: (node) => check(node.moduleReference?.expression),
      CallExpression: (node) => {
        if (node.callee.type === 'Identifier' && node.callee.name === 'require') check(node.arguments[0]);
      },
    };
  },
};
