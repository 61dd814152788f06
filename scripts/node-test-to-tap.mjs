// Converts test files written for node:test (describe/it and the hooks) to tap's API:
//   node scripts/node-test-to-tap.mjs test/a.test.ts test/stores/suite.ts …
// Give it every file involved at once: a helper that registers tests (a shared suite) and the
// files that call it are converted together.
//
// `describe`/`it` become `t.test` on the enclosing suite's `t` (the root `t` of `import t from 'tap'`
// outside any suite), their callbacks async (a tap test ends when its promise settles); `after`
// becomes `t.teardown`, `before`/`beforeEach`/`afterEach` keep their names on `t`. A named function
// that registers tests outside a suite callback (a shared suite, a scenario builder) gets the test
// to register on as a first parameter `t: Test`, and its callers pass theirs. `TestContext` becomes
// tap's `Test`, `t.diagnostic` `t.comment`; anything else imported from node:test (its `mock`) stays
// imported from there. What it cannot place is reported: check it by hand.
import { readFileSync, writeFileSync } from 'node:fs';
import ts from 'typescript';

const METHODS = { describe: 'test', it: 'test', test: 'test', before: 'before', after: 'teardown', beforeEach: 'beforeEach', afterEach: 'afterEach' };
const REGISTERS = new Set(['describe', 'it', 'test']);

const isFunction = (node) => node !== undefined && (ts.isArrowFunction(node) || ts.isFunctionExpression(node));

function parse(file) {
  const source = readFileSync(file, 'utf8');
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const declaration = sf.statements.find(
    (statement) => ts.isImportDeclaration(statement) && statement.moduleSpecifier.text === 'node:test',
  );
  // Local name → node:test export, for the names converted.
  const converted = new Map();
  for (const element of declaration?.importClause?.namedBindings?.elements ?? []) {
    const imported = (element.propertyName ?? element.name).text;
    if (imported in METHODS) converted.set(element.name.text, imported);
  }
  return { file, source, sf, declaration, converted, helpers: new Set(), helperFunctions: new Set() };
}

/** The name a function is called by: `function name`, or `const name = (…) => …`. */
function nameOf(fn) {
  if (ts.isFunctionDeclaration(fn)) return fn.name?.text;
  if (isFunction(fn) && ts.isVariableDeclaration(fn.parent) && ts.isIdentifier(fn.parent.name)) return fn.parent.name.text;
  return undefined;
}

function isExported(fn) {
  const statement = ts.isFunctionDeclaration(fn) ? fn : fn.parent?.parent?.parent;
  return statement?.modifiers?.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword) ?? false;
}

/** A call that registers a test or a hook, by the file's node:test names. */
function bddKind(unit, node) {
  if (!ts.isCallExpression(node) || !ts.isIdentifier(node.expression)) return undefined;
  return unit.converted.get(node.expression.text);
}

/** Whether `callback` is the function literal given to describe/it. */
function isTestCallback(unit, callback) {
  const call = callback.parent;
  if (!call || !ts.isCallExpression(call)) return false;
  const kind = bddKind(unit, call);
  return kind !== undefined && REGISTERS.has(kind) && call.arguments[call.arguments.length - 1] === callback;
}

/**
 * Marks the functions that register tests outside any test callback (directly, or by calling
 * such a function), until nothing changes: they get a `t` parameter.
 */
function findHelpers(units) {
  const exported = new Map();
  let changed = true;
  while (changed) {
    changed = false;
    for (const unit of units) {
      const calls = (name) => unit.helpers.has(name) || (exported.has(name) && importsName(unit, name));
      const walk = (node) => {
        const kind = bddKind(unit, node);
        const helperCall = ts.isCallExpression(node) && ts.isIdentifier(node.expression) && calls(node.expression.text);
        if (kind !== undefined || helperCall) {
          let fn = node.parent;
          while (fn && !ts.isFunctionLike(fn)) fn = fn.parent;
          // Inside a test callback, calls register on its t; at the top level, on the root t.
          let inCallback = false;
          for (let up = fn; up; up = up.parent) if (ts.isFunctionLike(up) && isTestCallback(unit, up)) inCallback = true;
          if (fn && !inCallback && !isTestCallback(unit, fn)) {
            const name = nameOf(fn);
            if (name !== undefined && !unit.helperFunctions.has(fn)) {
              unit.helpers.add(name);
              unit.helperFunctions.add(fn);
              if (isExported(fn)) exported.set(name, unit.file);
              changed = true;
            }
          }
        }
        ts.forEachChild(node, walk);
      };
      walk(unit.sf);
    }
  }
  return exported;
}

function importsName(unit, name) {
  return unit.sf.statements.some(
    (statement) =>
      ts.isImportDeclaration(statement) &&
      statement.importClause?.namedBindings &&
      ts.isNamedImports(statement.importClause.namedBindings) &&
      statement.importClause.namedBindings.elements.some((element) => element.name.text === name),
  );
}

function convert(unit, exported) {
  const { file, source, sf, declaration, converted } = unit;
  const helperNames = new Set([...unit.helpers, ...[...exported.keys()].filter((name) => importsName(unit, name))]);
  if (!declaration && helperNames.size === 0) return { changed: false, notes: [] };
  const notes = [];
  const edits = [];
  const replace = (start, end, text) => edits.push({ start, end, text });
  const insert = (position, text) => replace(position, position, text);
  const at = (node) => `${file}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}`;

  // The import is written last: the root t is imported only where something registers on it.
  let needsTestType = unit.helpers.size > 0;
  let usesRoot = false;
  const root = (scope, placed) => {
    if (!placed && scope === 't') usesRoot = true;
    return scope;
  };

  const makeAsync = (fn) => {
    if (fn.modifiers?.some((modifier) => modifier.kind === ts.SyntaxKind.AsyncKeyword)) return;
    insert(fn.getStart(sf), 'async ');
  };
  const openParen = (fn) => fn.getChildren(sf).find((child) => child.kind === ts.SyntaxKind.OpenParenToken);
  /** The test variable of a callback: its first parameter, or `t` added to it. */
  const callbackParameter = (fn) => {
    const first = fn.parameters[0];
    if (first) return first.name.getText(sf);
    insert(openParen(fn).getEnd(), 't');
    return 't';
  };
  const containsRegistration = (node) => {
    let found = false;
    const look = (child) => {
      if (found) return;
      if (bddKind(unit, child) !== undefined) found = true;
      else if (ts.isCallExpression(child) && ts.isIdentifier(child.expression) && helperNames.has(child.expression.text)) found = true;
      else ts.forEachChild(child, look);
    };
    ts.forEachChild(node, look);
    return found;
  };

  /** `scope`: the test variable registrations here go to; `placed`: inside a callback or helper. */
  const visit = (node, scope, placed) => {
    if (ts.isFunctionLike(node) && unit.helperFunctions.has(node)) {
      const open = openParen(node);
      insert(open.getEnd(), node.parameters.length > 0 ? 't: Test, ' : 't: Test');
      ts.forEachChild(node, (child) => visit(child, 't', true));
      return;
    }
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && helperNames.has(node.expression.text)) {
      const open = node.getChildren(sf).find((child) => child.kind === ts.SyntaxKind.OpenParenToken);
      insert(open.getEnd(), node.arguments.length > 0 ? `${root(scope, placed)}, ` : root(scope, placed));
      for (const argument of node.arguments) visit(argument, scope, placed);
      return;
    }
    const kind = bddKind(unit, node);
    if (kind !== undefined) {
      replace(node.expression.getStart(sf), node.expression.getEnd(), `${root(scope, placed)}.${METHODS[kind]}`);
      if (!placed && ts.findAncestor(node.parent, ts.isFunctionLike)) {
        notes.push(`${at(node)}: ${kind}() in a function that is not a named helper registers on the root t: check it`);
      }
      const fn = node.arguments[node.arguments.length - 1];
      if (REGISTERS.has(kind)) {
        if (!isFunction(fn)) notes.push(`${at(node)}: ${kind}() with a callback that is not a function literal: it must return a promise`);
        for (const argument of node.arguments) {
          if (argument !== fn || !isFunction(fn)) {
            visit(argument, scope, placed);
            continue;
          }
          makeAsync(fn);
          const inner = kind === 'describe' || containsRegistration(fn.body) ? callbackParameter(fn) : fn.parameters[0]?.name.getText(sf) ?? scope;
          visit(fn.body, inner, true);
        }
        return;
      }
      // Hooks: tap's take the function only (the per-file timeout bounds them).
      if (node.arguments.length > 1) {
        const extra = node.arguments[1];
        replace(node.arguments[0].getEnd(), extra.getEnd() + (node.arguments.hasTrailingComma ? 1 : 0), '');
        notes.push(`${at(node)}: ${kind}() options dropped (${extra.getText(sf)})`);
      }
      visit(node.arguments[0], scope, placed);
      return;
    }
    if (ts.isTypeReferenceNode(node) && ts.isIdentifier(node.typeName) && node.typeName.text === 'TestContext') {
      replace(node.typeName.getStart(sf), node.typeName.getEnd(), 'Test');
    }
    if (ts.isPropertyAccessExpression(node) && node.name.text === 'diagnostic' && ts.isCallExpression(node.parent)) {
      replace(node.name.getStart(sf), node.name.getEnd(), 'comment');
    }
    ts.forEachChild(node, (child) => visit(child, scope, placed));
  };
  for (const statement of sf.statements) if (statement !== declaration) visit(statement, 't', false);

  const kept = [];
  for (const element of declaration?.importClause?.namedBindings?.elements ?? []) {
    const imported = (element.propertyName ?? element.name).text;
    if (imported === 'TestContext') needsTestType = true;
    else if (!(imported in METHODS)) kept.push(element.getText(sf));
  }
  const tapNames = [usesRoot ? 't' : undefined, needsTestType ? (usesRoot ? '{ type Test }' : '{ Test }') : undefined].filter(Boolean);
  const tapImport = tapNames.length === 0 ? '' : usesRoot || !needsTestType ? `import ${tapNames.join(', ')} from 'tap';` : "import type { Test } from 'tap';";
  const keptImport = kept.length > 0 ? `import { ${kept.join(', ')} } from 'node:test';` : '';
  const imports = [tapImport, keptImport].filter(Boolean).join('\n');
  if (declaration) replace(declaration.getStart(sf), declaration.getEnd(), imports);
  else if (imports) {
    const last = sf.statements.filter(ts.isImportDeclaration).at(-1);
    insert(last ? last.getEnd() : 0, `\n${imports}`);
  }

  edits.sort((a, b) => b.start - a.start || b.end - a.end);
  let text = source;
  for (const edit of edits) text = text.slice(0, edit.start) + edit.text + text.slice(edit.end);
  writeFileSync(file, text);
  return { changed: true, notes };
}

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: node scripts/node-test-to-tap.mjs <file>...');
  process.exit(64);
}
const units = files.map(parse);
const exported = findHelpers(units.filter((unit) => unit.declaration));
let count = 0;
for (const unit of units) {
  const { changed, notes } = convert(unit, exported);
  if (changed) count += 1;
  for (const note of notes) console.log(note);
}
console.log(`${count} of ${files.length} files converted`);
