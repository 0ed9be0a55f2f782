// Copy as code: the query in the bar as a snippet for each official SDK —
// Go (aztables), JavaScript (@azure/data-tables), Python
// (azure-data-tables) and .NET (Azure.Data.Tables). The connection string
// is read from an environment variable; no key is written into a snippet.

import { h, clear, openDialog, copyText, status } from './ui.js';

const ENV = 'AZURE_TABLES_CONNECTION_STRING';
// JSON string literals are valid string literals in all four languages
// for the text a filter holds.
const q = (s) => JSON.stringify(s);

export function snippets(table, { filter = '', select = '', top = '' }) {
  const cols = select ? select.split(',').filter(Boolean) : [];
  const go = [
    'package main',
    '',
    'import (',
    '\t"context"',
    '\t"fmt"',
    '\t"os"',
    '',
    '\t"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"',
    ')',
    '',
    'func main() {',
    `\tsvc, err := aztables.NewServiceClientFromConnectionString(os.Getenv(${q(ENV)}), nil)`,
    '\tif err != nil {',
    '\t\tpanic(err)',
    '\t}',
    `\tclient := svc.NewClient(${q(table)})`,
    '\topts := &aztables.ListEntitiesOptions{}',
    filter ? `\tfilter := ${q(filter)}\n\topts.Filter = &filter` : null,
    cols.length ? `\tsel := ${q(cols.join(','))}\n\topts.Select = &sel` : null,
    top ? `\ttop := int32(${+top})\n\topts.Top = &top // entities per page` : null,
    '\tpager := client.NewListEntitiesPager(opts)',
    '\tfor pager.More() {',
    '\t\tpage, err := pager.NextPage(context.Background())',
    '\t\tif err != nil {',
    '\t\t\tpanic(err)',
    '\t\t}',
    '\t\tfor _, e := range page.Entities {',
    '\t\t\tfmt.Println(string(e))',
    '\t\t}',
    '\t}',
    '}',
  ].filter((l) => l !== null).join('\n');

  const qo = [];
  if (filter) qo.push(`filter: ${q(filter)}`);
  if (cols.length) qo.push(`select: ${JSON.stringify(cols)}`);
  const js = [
    'import { TableClient } from "@azure/data-tables";',
    '',
    `const client = TableClient.fromConnectionString(process.env.${ENV}, ${q(table)}, {`,
    '  allowInsecureConnection: true, // tableemu over http',
    '});',
    `const entities = client.listEntities(${qo.length ? `{ queryOptions: { ${qo.join(', ')} } }` : ''});`,
    `for await (const page of entities.byPage(${top ? `{ maxPageSize: ${+top} }` : ''})) {`,
    '  for (const entity of page) console.log(entity);',
    '}',
  ].join('\n');

  const pyArgs = [];
  if (cols.length) pyArgs.push(`select=${JSON.stringify(cols)}`);
  if (top) pyArgs.push(`results_per_page=${+top}`);
  const py = [
    'import os',
    '',
    'from azure.data.tables import TableClient',
    '',
    `client = TableClient.from_connection_string(os.environ[${q(ENV)}], table_name=${q(table)})`,
    filter
      ? `entities = client.query_entities(${[q(filter), ...pyArgs].join(', ')})`
      : `entities = client.list_entities(${pyArgs.join(', ')})`,
    'for entity in entities:',
    '    print(entity)',
  ].join('\n');

  const csArgs = [];
  if (filter) csArgs.push(`filter: ${q(filter)}`);
  if (top) csArgs.push(`maxPerPage: ${+top}`);
  if (cols.length) csArgs.push(`select: new[] { ${cols.map(q).join(', ')} }`);
  const cs = [
    'using System;',
    'using Azure.Data.Tables;',
    '',
    `var client = new TableClient(Environment.GetEnvironmentVariable(${q(ENV)}), ${q(table)});`,
    `foreach (TableEntity entity in client.Query<TableEntity>(${csArgs.join(', ')}))`,
    '{',
    '    Console.WriteLine($"{entity.PartitionKey} {entity.RowKey}");',
    '}',
  ].join('\n');

  return [
    { id: 'go', label: 'Go', pkg: 'github.com/Azure/azure-sdk-for-go/sdk/data/aztables', code: go },
    { id: 'js', label: 'JavaScript', pkg: '@azure/data-tables', code: js },
    { id: 'py', label: 'Python', pkg: 'azure-data-tables', code: py },
    { id: 'cs', label: '.NET', pkg: 'Azure.Data.Tables', code: cs },
  ];
}

let lastTab = 'go';

export function openSnippets(app, table, query) {
  const list = snippets(table, query);
  return openDialog('Copy the query as code', () => {
    const panel = h('div', { class: 'tabpanel', role: 'tabpanel', id: 'snippet-panel', tabindex: '0' });
    const tabs = list.map((s) =>
      h('button', {
        type: 'button',
        role: 'tab',
        id: `tab-${s.id}`,
        'aria-controls': 'snippet-panel',
        'aria-selected': 'false',
        tabindex: '-1',
        text: s.label,
        onclick: () => select(s.id),
        onkeydown: (e) => {
          const i = list.indexOf(s);
          const j = e.key === 'ArrowRight' ? (i + 1) % list.length : e.key === 'ArrowLeft' ? (i + list.length - 1) % list.length : -1;
          if (j >= 0) {
            select(list[j].id);
            document.getElementById(`tab-${list[j].id}`).focus();
          }
        },
      }));
    const select = (id) => {
      lastTab = id;
      const s = list.find((x) => x.id === id);
      for (const t of tabs) {
        const on = t.id === `tab-${id}`;
        t.setAttribute('aria-selected', String(on));
        t.tabIndex = on ? 0 : -1;
      }
      panel.setAttribute('aria-labelledby', `tab-${id}`);
      // The button comes before the code, so it is in view however long
      // the snippet; the code box shows all of it, long lines wrapped
      // (style.css pre.code): no line or end of the snippet out of sight.
      clear(panel,
        h('div', { class: 'code-head' },
          h('p', { class: 'help' }, 'Package ', h('code', { text: s.pkg }), `; set ${ENV} to the connection string tableemu printed at start.`),
          h('button', {
            type: 'button',
            class: 'primary',
            id: 'copy-snippet',
            text: `Copy ${s.label}`,
            onclick: async () => status((await copyText(s.code)) ? `Copied the ${s.label} snippet` : 'Could not copy: select the text and copy it', 'info'),
          })),
        h('pre', { class: 'code', id: `code-${id}` }, h('code', { text: s.code })));
    };
    const root = h('div', { class: 'stack' },
      query.filter || query.select || query.top
        ? h('p', { class: 'help' }, 'Table ', h('code', { text: table }), query.filter ? [' · $filter ', h('code', { text: query.filter })] : null)
        : h('p', { class: 'help', text: `All entities of ${table}; write a $filter to narrow it.` }),
      h('div', { role: 'tablist', 'aria-label': 'Language', class: 'tabs' }, tabs),
      panel);
    select(lastTab);
    return root;
  }, { wide: true });
}
