export { jobController, JobControllerOptions, type JobControllerConfig, isJobFinished } from './job-controller';
