import AnonymizeIp from './AnonymizeIp.js';
import Authenticate from './Authenticate.js';
import CacheDisabled from './CacheDisabled.js';
import CacheStatic from './CacheStatic.js';
import CachedFileGet from './CachedFileGet.js';
import CachedFileSet from './CachedFileSet.js';
import CacheUrl from './CacheUrl.js';
import CalculateIp from './CalculateIp.js';
import CheckKey from './CheckKey.js';
import CheckLocalCall from './CheckLocalCall.js';
import CheckStatus from './CheckStatus.js';
import Concat from './Concat.js';
import DatabaseBeginTransaction from './DatabaseBeginTransaction.js';
import DatabaseCommitTransaction from './DatabaseCommitTransaction.js';
import DatabaseConnect from './DatabaseConnect.js';
import DatabaseCreate from './DatabaseCreate.js';
import DatabaseMigrate from './DatabaseMigrate.js';
import DatabaseQuery from './DatabaseQuery.js';
import DatabaseRollback from './DatabaseRollback.js';
import Delay from './Delay.js';
import DeleteFile from './DeleteFile.js';
import EnableDebug from './EnableDebug.js';
import Event from './Event.js';
import ExecuteIf from './ExecuteIf.js';
import FileSize from './FileSize.js';
import ForTheWorker from './ForTheWorker.js';
import Groups from './Groups.js';
import Http from './Http.js';
import IdResponse from './IdResponse.js';
import LoadAndValidateModel from './LoadAndValidateModel.js';
import LoadModel from './LoadModel.js';
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
import ReadJob from './ReadJob.js';
import RedisGet from './RedisGet.js';
import RedisSet from './RedisSet.js';
import ResultResponse from './ResultResponse.js';
import SaveFile from './SaveFile.js';
import ServeCompiledStatic from './ServeCompiledStatic.js';
import ServeStatic from './ServeStatic.js';
import SetMemory from './SetMemory.js';
import SetSmartError from './SetSmartError.js';
import Smart from './Smart.js';
import StaticNameGenerator from './StaticNameGenerator.js';
import StringToFriendlyUrl from './StringToFriendlyUrl.js';
import ThrowError from './ThrowError.js';
import ValidateModel from './ValidateModel.js';
import View from './View.js';
import WriteToJob from './WriteToJob.js';
import XmlToModel from './XmlToModel.js';
import type { AnyDirectiveDefinition } from '../engine/directive-types.js';

/** Every built-in directive (one file each, one line each here). */
const all: Array<AnyDirectiveDefinition> = [
  AnonymizeIp,
  Authenticate,
  CacheDisabled,
  CacheStatic,
  CachedFileGet,
  CachedFileSet,
  CacheUrl,
  CalculateIp,
  CheckKey,
  CheckLocalCall,
  CheckStatus,
  Concat,
  DatabaseBeginTransaction,
  DatabaseCommitTransaction,
  DatabaseConnect,
  DatabaseCreate,
  DatabaseMigrate,
  DatabaseQuery,
  DatabaseRollback,
  Delay,
  DeleteFile,
  EnableDebug,
  Event,
  ExecuteIf,
  FileSize,
  ForTheWorker,
  Groups,
  Http,
  IdResponse,
  LoadAndValidateModel,
  LoadModel,
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
  ReadJob,
  RedisGet,
  RedisSet,
  ResultResponse,
  SaveFile,
  ServeCompiledStatic,
  ServeStatic,
  SetMemory,
  SetSmartError,
  Smart,
  StaticNameGenerator,
  StringToFriendlyUrl,
  ThrowError,
  ValidateModel,
  View,
  WriteToJob,
  XmlToModel,
];

/** Every built-in directive, by name. The engine only ever looks names up here. */
export const builtinDirectives: ReadonlyMap<string, AnyDirectiveDefinition> = new Map(all.map((d) => [d.name, d]));
