/** Distinguished names as RFC 4514-style strings and as attribute maps. */
import * as asn1js from 'asn1js';
import type * as pkijs from 'pkijs';

const SHORT_NAMES: Readonly<Record<string, string>> = {
  '2.5.4.3': 'CN',
  '2.5.4.4': 'SN',
  '2.5.4.5': 'SERIALNUMBER',
  '2.5.4.6': 'C',
  '2.5.4.7': 'L',
  '2.5.4.8': 'ST',
  '2.5.4.9': 'STREET',
  '2.5.4.10': 'O',
  '2.5.4.11': 'OU',
  '2.5.4.12': 'T',
  '2.5.4.42': 'G',
  '1.2.840.113549.1.9.1': 'E',
  '0.9.2342.19200300.100.1.25': 'DC',
  '0.9.2342.19200300.100.1.1': 'UID',
  '1.2.643.3.131.1.1': 'INN',
  '1.2.643.100.1': 'OGRN',
  '1.2.643.100.3': 'SNILS',
  '1.2.643.100.4': 'INNLE',
  '1.2.643.100.5': 'OGRNIP',
};

export interface CertificateName {
  /** RFC 4514 order (most specific first), e.g. "CN=Signer,O=Org,C=RU". */
  rdn: string;
  /** Attribute short name (or OID when unknown) -> value; repeated attributes joined with "; ". */
  attributes: Record<string, string>;
}

function valueToString(value: unknown): string {
  if (value instanceof asn1js.BaseStringBlock) return value.getValue();
  if (value instanceof asn1js.BaseBlock) {
    const hex = Buffer.from(value.toBER(false)).toString('hex');
    return `#${hex}`;
  }
  return String(value);
}

function escapeRdnValue(v: string): string {
  return v.replace(/([,+"\\<>;=])/g, '\\$1').replace(/^([ #])/, '\\$1').replace(/ $/, '\\ ');
}

export function describeName(name: pkijs.RelativeDistinguishedNames): CertificateName {
  const attributes: Record<string, string> = {};
  const parts: string[] = [];
  for (const tv of name.typesAndValues) {
    const key = SHORT_NAMES[tv.type] ?? tv.type;
    const value = valueToString(tv.value);
    attributes[key] = attributes[key] === undefined ? value : `${attributes[key]}; ${value}`;
    parts.push(`${key}=${escapeRdnValue(value)}`);
  }
  return { rdn: parts.reverse().join(','), attributes };
}
