/**
 * The emulated service's records: accounts, product catalogs (with their products), product
 * sets, custom audiences, do-not-reach lists and tailored-audience permissions, seeded with
 * the ids of EMULATOR_DEFAULTS (or those given). Records are soft-deleted (deleted: true)
 * except products and catalogs, whose deletion is permanent.
 */
import { AudienceMembership, PARTNER_USER_ID } from './audience-membership.js';
import { formatIsoInstant } from './iso-time.js';
import { ProductCatalog } from './product-catalog.js';

export const CUSTOM_AUDIENCE_HASHED_FIELDS = ['email', 'phone_number', 'handle', 'twitter_id', 'device_id'] as const;
export const DO_NOT_REACH_HASHED_FIELDS = ['email', 'phone_number'] as const;

export interface SeedIds {
  accountId: string;
  catalogId: string;
  customAudienceId: string;
  doNotReachListId: string;
}

export interface AccountRecord {
  seq: number;
  id: string;
  name: string;
  business_name: string;
  timezone: string;
  timezone_switch_at: string;
  created_at: string;
  updated_at: string;
  industry_type: string;
  business_id: string;
  approval_status: string;
  deleted: boolean;
}

export interface TargetedLineItem {
  id: string;
  name: string;
  servable: boolean;
}

export interface TargetedCampaign {
  campaign_id: string;
  campaign_name: string;
  line_items: TargetedLineItem[];
}

export interface CustomAudienceRecord {
  seq: number;
  id: string;
  accountId: string;
  name: string;
  description: string;
  createdAt: string;
  updatedAt: string;
  deleted: boolean;
  membership: AudienceMembership;
  targeted: TargetedCampaign[];
}

export interface DoNotReachListRecord {
  seq: number;
  id: string;
  accountId: string;
  name: string;
  description: string;
  createdAt: string;
  updatedAt: string;
  deleted: boolean;
  membership: AudienceMembership;
}

export type PermissionLevel = 'READ_ONLY' | 'READ_WRITE';

export interface PermissionRecord {
  seq: number;
  id: string;
  accountId: string;
  tailoredAudienceId: string;
  grantedAccountId: string;
  permissionLevel: PermissionLevel;
  createdAt: string;
  updatedAt: string;
  deleted: boolean;
}

export interface ProductSetFilter {
  attribute: string;
  operator: string;
  value: string;
}

export interface ProductSetRecord {
  seq: number;
  id: string;
  catalogId: string;
  name: string;
  description: string | null;
  type: 'MANUAL' | 'FILTERED';
  filters: ProductSetFilter[];
  productKeys: string[];
  createdAt: string;
  updatedAt: string;
}

export const BUSINESS_ID = 'emu-business';

export class EmulatorStore {
  readonly accounts = new Map<string, AccountRecord>();
  readonly catalogs = new Map<string, ProductCatalog>();
  readonly productSets = new Map<string, ProductSetRecord>();
  readonly customAudiences = new Map<string, CustomAudienceRecord>();
  readonly doNotReachLists = new Map<string, DoNotReachListRecord>();
  readonly permissions = new Map<string, PermissionRecord>();
  private seqCounter = 0;

  constructor(
    readonly seedIds: SeedIds,
    private readonly now: () => number,
  ) {
    this.reset();
  }

  nextSeq(): number {
    this.seqCounter += 1;
    return this.seqCounter;
  }

  /** A new record id, short base-36 like the service's ids. */
  newId(): string {
    return (46_656 + this.nextSeq()).toString(36);
  }

  /** The current time in the service's timestamp format. */
  timestamp(): string {
    return formatIsoInstant(this.now());
  }

  /** Back to the seeded records; everything else is dropped. */
  reset(): void {
    this.accounts.clear();
    this.catalogs.clear();
    this.productSets.clear();
    this.customAudiences.clear();
    this.doNotReachLists.clear();
    this.permissions.clear();
    this.seqCounter = 0;
    const { accountId, catalogId, customAudienceId, doNotReachListId } = this.seedIds;
    this.createAccount('Emulator account', accountId);
    this.createCatalog('Emulator catalog', catalogId);
    const audience = this.createCustomAudience(accountId, 'Emulator custom audience', customAudienceId);
    audience.targeted.push({
      campaign_id: 'emu-campaign',
      campaign_name: 'Emulator campaign',
      line_items: [
        { id: 'emu-line-item', name: 'Emulator line item', servable: true },
        { id: 'emu-line-item-paused', name: 'Emulator paused line item', servable: false },
      ],
    });
    this.createDoNotReachList(accountId, 'Emulator do-not-reach list', doNotReachListId);
  }

  createAccount(name: string, id = this.newId()): AccountRecord {
    const t = this.timestamp();
    const record: AccountRecord = {
      seq: this.nextSeq(),
      id,
      name,
      business_name: 'Emulator business',
      timezone: 'America/Los_Angeles',
      timezone_switch_at: t,
      created_at: t,
      updated_at: t,
      industry_type: 'TECHNOLOGY',
      business_id: BUSINESS_ID,
      approval_status: 'ACCEPTED',
      deleted: false,
    };
    this.accounts.set(id, record);
    return record;
  }

  createCatalog(name: string, id = this.newId()): ProductCatalog {
    const t = this.timestamp();
    const catalog = new ProductCatalog(id, name, t, t, this.nextSeq());
    this.catalogs.set(id, catalog);
    return catalog;
  }

  createCustomAudience(accountId: string, name: string, id = this.newId()): CustomAudienceRecord {
    const t = this.timestamp();
    const record: CustomAudienceRecord = {
      seq: this.nextSeq(),
      id,
      accountId,
      name,
      description: '',
      createdAt: t,
      updatedAt: t,
      deleted: false,
      membership: new AudienceMembership(CUSTOM_AUDIENCE_HASHED_FIELDS, [PARTNER_USER_ID]),
      targeted: [],
    };
    this.customAudiences.set(id, record);
    return record;
  }

  createDoNotReachList(accountId: string, name: string, id = this.newId()): DoNotReachListRecord {
    const t = this.timestamp();
    const record: DoNotReachListRecord = {
      seq: this.nextSeq(),
      id,
      accountId,
      name,
      description: '',
      createdAt: t,
      updatedAt: t,
      deleted: false,
      membership: new AudienceMembership(DO_NOT_REACH_HASHED_FIELDS),
    };
    this.doNotReachLists.set(id, record);
    return record;
  }
}
