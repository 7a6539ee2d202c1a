import { sqliteAppend, formatRows } from '../bench/store.ts';
for (let i = 0; i < 3; i++) console.log(formatRows(await sqliteAppend()));
