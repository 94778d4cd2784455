import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { SRC } from './import-graph.js';

/**
 * Product functions longer than a limit (default 100 lines), with whether a comment right
 * above them says why. `npx tsx scripts/long-functions.ts [limit]`; test/architecture holds
 * the product to it.
 */

export interface LongFunction {
  readonly file: string;
  readonly name: string;
  readonly lines: number;
  /** The JSDoc or line comment right above it, if any. */
  readonly comment: string;
}

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return files(path);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [path] : [];
  });
}

export function longFunctions(limit = 100): LongFunction[] {
  const found: LongFunction[] = [];
  for (const file of files(SRC)) {
    const text = readFileSync(file, 'utf8');
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
    const visit = (node: ts.Node) => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
        const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
        const end = source.getLineAndCharacterOfPosition(node.end).line;
        if (end - start + 1 > limit) {
          const holder = ts.isVariableDeclaration(node.parent) ? node.parent.parent.parent : ts.isPropertyAssignment(node.parent) ? node.parent : node;
          const comments = ts.getLeadingCommentRanges(text, holder.getFullStart()) ?? [];
          const name = node.name?.getText(source) ?? (ts.isVariableDeclaration(node.parent) ? node.parent.name.getText(source) : ts.isPropertyAssignment(node.parent) ? node.parent.name.getText(source) : '(anonymous)');
          found.push({ file: relative(SRC, file), name, lines: end - start + 1, comment: comments.map((c) => text.slice(c.pos, c.end)).join('\n') });
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const f of longFunctions(Number(process.argv[2] ?? 100))) process.stdout.write(`${f.lines}\t${f.file}\t${f.name}\t${f.comment === '' ? '(no comment)' : 'commented'}\n`);
}
