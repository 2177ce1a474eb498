export { cronJobController, CronJobControllerOptions, type CronJobControllerConfig } from './cronjob-controller';
export { parseSchedule, ScheduleParseError, type Schedule } from './schedule';
