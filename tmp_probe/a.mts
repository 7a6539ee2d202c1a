import { sqliteAppend, formatRows } from '../bench/store.ts';
console.log(formatRows(await sqliteAppend()));
