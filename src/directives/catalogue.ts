import Authenticate from './Authenticate.js';
import CacheDisabled from './CacheDisabled.js';
import CacheStatic from './CacheStatic.js';
import CacheUrl from './CacheUrl.js';
import CachedFileGet from './CachedFileGet.js';
import CachedFileSet from './CachedFileSet.js';
import CheckKey from './CheckKey.js';
import CheckLocalCall from './CheckLocalCall.js';
import Concat from './Concat.js';
import DatabaseConnect from './DatabaseConnect.js';
import DatabaseQuery from './DatabaseQuery.js';
import Delay from './Delay.js';
import DeleteFile from './DeleteFile.js';
import EnableDebug from './EnableDebug.js';
import Event from './Event.js';
import ExecuteIf from './ExecuteIf.js';
import FileSize from './FileSize.js';
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
import Quota from './Quota.js';
import QuotaIp from './QuotaIp.js';
import RateLimit from './RateLimit.js';
import ReadFile from './ReadFile.js';
import SaveFile from './SaveFile.js';
import ServeCompiledStatic from './ServeCompiledStatic.js';
import ServeStatic from './ServeStatic.js';
import SetMemory from './SetMemory.js';
import SetSmartError from './SetSmartError.js';
import Smart from './Smart.js';
import StaticNameGenerator from './StaticNameGenerator.js';
import ThrowError from './ThrowError.js';
import View from './View.js';
import type { DirectiveDefinition } from './types.js';

/** Every built-in directive (one file each, one line each here). */
const all: Array<DirectiveDefinition<any>> = [
  Authenticate,
  CacheDisabled,
  CacheStatic,
  CacheUrl,
  CachedFileGet,
  CachedFileSet,
  CheckKey,
  CheckLocalCall,
  Concat,
  DatabaseConnect,
  DatabaseQuery,
  Delay,
  DeleteFile,
  EnableDebug,
  Event,
  ExecuteIf,
  FileSize,
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
  Quota,
  QuotaIp,
  RateLimit,
  ReadFile,
  SaveFile,
  ServeCompiledStatic,
  ServeStatic,
  SetMemory,
  SetSmartError,
  Smart,
  StaticNameGenerator,
  ThrowError,
  View,
];

/** Every built-in directive, by name. The engine only ever looks names up here. */
export const builtinDirectives: ReadonlyMap<string, DirectiveDefinition<any>> = new Map(all.map((d) => [d.name, d]));
