/**
 * ISO 4217 currency codes a price may be given in: the currencies of ISO 4217 List One in
 * force (2025), written out rather than taken from Intl.supportedValuesOf('currency'), whose
 * answer depends on the ICU data of the Node build (Node 20 lacks VED and still lists withdrawn
 * codes such as HRK, SLL and CUC).
 *
 * Left out on purpose: fund codes (BOV, CHE, CHW, CLF, COU, MXV, USN, UYI, UYW), precious metals
 * (XAG, XAU, XPD, XPT), bond-market units and SDR (XBA..XBD, XDR, XSU, XUA), the test code XTS
 * and XXX (no currency): nobody sells a product for them.
 */
const CODES =
  'AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP BYN BZD CAD CDF CHF ' +
  'CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG ' +
  'HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA ' +
  'MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD ' +
  'RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX ' +
  'USD UYU UZS VED VES VND VUV WST XAF XCD XCG XOF XPF YER ZAR ZMW ZWG';

export const CURRENCY_CODES: ReadonlySet<string> = new Set(CODES.split(' '));

/** True for an upper-case code of the set above. */
export function isCurrencyCode(code: string): boolean {
  return CURRENCY_CODES.has(code);
}
