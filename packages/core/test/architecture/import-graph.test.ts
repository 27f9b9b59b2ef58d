import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/**
 * The floor: the backend contract (contract/) and the leaf modules its types are made of
 * (the Tensor type, data types, the config schema, InferenceError). Every file of the floor
 * imports only files of the floor, so the interfaces a backend stands on never reach the
 * server, the schedulers or the model layer. A folder ends with '/'.
 */
const FLOOR = ['contract/', 'tensor/tensor.ts', 'tensor/datatype.ts', 'config/schema.ts', 'config/proto-integers.ts', 'errors.ts'];

interface Edge {
  /** The imported file, relative to src/. */
  readonly to: string;
  readonly line: number;
}

/** file (relative to src/) → the core files it imports. */
type ImportGraph = Map<string, Edge[]>;

/**
 * Core's imports between its own files, read with the TypeScript parser: `import`,
 * `import type`, `export … from`, `import()` and `import('…')` types all count, since a
 * circle of types alone still ties its files together. Bare specifiers (packages) are not
 * core's files and are left out.
 */
function readImportGraph(): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const file of sourceFiles(SRC)) {
    const path = join(SRC, file);
    const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
    const edges: Edge[] = [];
    const visit = (node: ts.Node): void => {
      const specifier = moduleSpecifier(node);
      if (specifier?.startsWith('.')) {
        const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
        edges.push({ to: resolveSpecifier(file, specifier, line), line });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    graph.set(file, edges);
  }
  return graph;
}

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => name.split('\\').join('/'))
    .sort();
}

function moduleSpecifier(node: ts.Node): string | undefined {
  if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
    return node.moduleSpecifier.text;
  }
  if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
    const [argument] = node.arguments;
    return argument && ts.isStringLiteral(argument) ? argument.text : undefined;
  }
  if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
    return node.argument.literal.text;
  }
  return undefined;
}

/** `./x.js` is `./x.ts` in the sources; an import that names no file fails here, so no edge goes unseen. */
function resolveSpecifier(from: string, specifier: string, line: number): string {
  const base = resolve(SRC, dirname(from), specifier);
  const candidates = [base.replace(/\.js$/, '.ts'), `${base}.ts`, join(base, 'index.ts')];
  const found = candidates.find((candidate) => candidate.endsWith('.ts') && existsSync(candidate));
  if (!found) throw new Error(`${from}:${line} imports '${specifier}', which is no file of core's sources`);
  return relative(SRC, found).split('\\').join('/');
}

/**
 * One cycle per strongly connected group of files (Tarjan), written as the path
 * `a.ts:3 → b.ts:7 → a.ts`, each file with the line of its import of the next.
 */
function findCycles(graph: ImportGraph): string[] {
  const index = new Map<string, number>();
  const lowLink = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const connect = (file: string): void => {
    index.set(file, index.size);
    lowLink.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const { to } of graph.get(file) ?? []) {
      if (!index.has(to)) {
        connect(to);
        lowLink.set(file, Math.min(lowLink.get(file)!, lowLink.get(to)!));
      } else if (onStack.has(to)) {
        lowLink.set(file, Math.min(lowLink.get(file)!, index.get(to)!));
      }
    }
    if (lowLink.get(file) !== index.get(file)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== file);
    const importsItself = (graph.get(file) ?? []).some((edge) => edge.to === file);
    if (group.length > 1 || importsItself) groups.push(group.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) connect(file);
  return groups.map((group) => shortestCycle(graph, new Set(group), group[0]!));
}

/** The shortest path from `start` back to itself inside one group, found breadth first. */
function shortestCycle(graph: ImportGraph, group: ReadonlySet<string>, start: string): string {
  const cameFrom = new Map<string, { file: string; line: number }>();
  const queue = [start];
  for (const file of queue) {
    for (const { to, line } of graph.get(file) ?? []) {
      if (!group.has(to) || cameFrom.has(to)) continue;
      cameFrom.set(to, { file, line });
      if (to === start) {
        const steps: string[] = [start];
        for (let at = cameFrom.get(start)!; ; at = cameFrom.get(at.file)!) {
          steps.unshift(`${at.file}:${at.line}`);
          if (at.file === start) break;
        }
        return `${steps.join(' → ')} (${group.size} files in this circle)`;
      }
      queue.push(to);
    }
  }
  throw new Error(`no cycle through ${start}`);
}

const inFloor = (file: string) => FLOOR.some((entry) => (entry.endsWith('/') ? file.startsWith(entry) : file === entry));

describe("core's import graph", () => {
  const graph = readImportGraph();

  it('has no import cycle, type-only imports included', () => {
    expect(findCycles(graph)).toEqual([]);
  });

  it('keeps the floor (contract/ and the leaves its types are made of) free of imports from above it', () => {
    const floor = [...graph.keys()].filter(inFloor);
    expect(floor).toContain('contract/backend.ts');
    const upward = floor.flatMap((file) => graph.get(file)!.filter((edge) => !inFloor(edge.to)).map((edge) => `${file}:${edge.line} → ${edge.to}`));
    expect(upward).toEqual([]);
  });

  it('names a cycle when there is one', () => {
    const circle: ImportGraph = new Map([
      ['a.ts', [{ to: 'b.ts', line: 1 }]],
      ['b.ts', [{ to: 'c.ts', line: 2 }]],
      ['c.ts', [{ to: 'a.ts', line: 3 }, { to: 'd.ts', line: 4 }]],
      ['d.ts', []],
    ]);
    expect(findCycles(circle)).toEqual(['a.ts:1 → b.ts:2 → c.ts:3 → a.ts (3 files in this circle)']);
  });
});
