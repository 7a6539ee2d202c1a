import { runnerScenario } from './scenario.ts';

runnerScenario(['postgres']);
