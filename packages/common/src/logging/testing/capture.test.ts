import { NOP_LOGGER } from '../logger';

import { captureLogging } from './capture';

describe('captureLogging', () => {
  it('keeps formatted lines with their severity', () => {
    const { logger, lines } = captureLogging({ verbosity: 2 });
    logger.child('ctrl').info('Synced', { key: 'a/b' });
    logger.v(2).info('Detail', { n: 1 });
    logger.v(3).info('Hidden');
    logger.error('Failed', { err: new Error('boom') });
    expect(lines()).toEqual(['I "Synced" logger="ctrl" key="a/b"', 'I "Detail" n=1', 'E "Failed" err="boom"']);
  });

  it('has a logger that discards everything', () => {
    expect(NOP_LOGGER.v(0).enabled).toBe(false);
    expect(() => NOP_LOGGER.child('x').error('nothing')).not.toThrow();
  });
});
