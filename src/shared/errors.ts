/** The errors Anvil raises on purpose: the class, the catalogue of codes, and how they reach a client. */
export { AnvilError, DataDirInUseError, QuotaError, RegistryValidationError } from './errors/anvil-error.js';
export { Errors, quotaErrorFromWire, type CatalogueEntry, type ErrorFactory } from './errors/catalogue.js';
export {
  clientError,
  errorBody,
  isLoggedError,
  isQuotaCode,
  publicMessage,
  QUOTA_CODE_PREFIX,
  toStatusError,
} from './errors/public-message.js';
