import { runnerScenario } from './scenario.ts';

runnerScenario(['sqlite']);
