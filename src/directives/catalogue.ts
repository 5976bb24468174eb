import Authenticate from './Authenticate.js';
import CacheDisabled from './CacheDisabled.js';
import CacheStatic from './CacheStatic.js';
import CheckKey from './CheckKey.js';
import CheckLocalCall from './CheckLocalCall.js';
import Concat from './Concat.js';
import DatabaseConnect from './DatabaseConnect.js';
import DatabaseQuery from './DatabaseQuery.js';
import Delay from './Delay.js';
import EnableDebug from './EnableDebug.js';
import Event from './Event.js';
import ExecuteIf from './ExecuteIf.js';
import ForTheWorker from './ForTheWorker.js';
import Groups from './Groups.js';
import Http from './Http.js';
import LocalCall from './LocalCall.js';
import Log from './Log.js';
import ModifyMessage from './ModifyMessage.js';
import OnError from './OnError.js';
import Ping from './Ping.js';
import PropagateCorrelationId from './PropagateCorrelationId.js';
import Pull from './Pull.js';
import Push from './Push.js';
import RateLimit from './RateLimit.js';
import ServeStatic from './ServeStatic.js';
import SetMemory from './SetMemory.js';
import SetSmartError from './SetSmartError.js';
import Smart from './Smart.js';
import ThrowError from './ThrowError.js';
import View from './View.js';
import type { DirectiveDefinition } from './types.js';

/** Every built-in directive (one file each, one line each here). */
const all: Array<DirectiveDefinition<any>> = [
  Authenticate,
  CacheDisabled,
  CacheStatic,
  CheckKey,
  CheckLocalCall,
  Concat,
  DatabaseConnect,
  DatabaseQuery,
  Delay,
  EnableDebug,
  Event,
  ExecuteIf,
  ForTheWorker,
  Groups,
  Http,
  LocalCall,
  Log,
  ModifyMessage,
  OnError,
  Ping,
  PropagateCorrelationId,
  Pull,
  Push,
  RateLimit,
  ServeStatic,
  SetMemory,
  SetSmartError,
  Smart,
  ThrowError,
  View,
];

/** Every built-in directive, by name. The engine only ever looks names up here. */
export const builtinDirectives: ReadonlyMap<string, DirectiveDefinition<any>> = new Map(all.map((d) => [d.name, d]));
