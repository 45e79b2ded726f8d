// Latin look-alikes that Unicode NFKC leaves alone, folded to the ASCII letter they imitate.
//
// Source: the single-character → single-Latin-letter entries of the Unicode confusables table
// (UTS #39, https://www.unicode.org/Public/security/latest/confusables.txt) for the scripts used
// to spoof English keywords: Cyrillic, Greek, Armenian and the IPA/Latin-extended letters. Only
// letters that look like the Latin letter in common fonts are listed (Cyrillic к, м, т, в are
// small capitals and left out). Fullwidth letters, mathematical alphanumerics (𝐢𝐠𝐧𝐨𝐫𝐞) and
// ligatures are NFKC's job and are not repeated here. Every entry is one UTF-16 code unit on both
// sides, so folding never moves an offset.
export const CONFUSABLE_LATIN: Readonly<Record<string, string>> = {
  // Cyrillic, lower case
  '\u0430': 'a',
  '\u0441': 'c',
  '\u0501': 'd',
  '\u0435': 'e',
  '\u04BD': 'e',
  '\u04BB': 'h',
  '\u0456': 'i',
  '\u0458': 'j',
  '\u04CF': 'l',
  '\u043E': 'o',
  '\u0440': 'p',
  '\u051B': 'q',
  '\u0455': 's',
  '\u051D': 'w',
  '\u0445': 'x',
  '\u0443': 'y',
  '\u04AF': 'y',
  // Cyrillic, upper case
  '\u0410': 'A',
  '\u0412': 'B',
  '\u0415': 'E',
  '\u041A': 'K',
  '\u041C': 'M',
  '\u041D': 'H',
  '\u041E': 'O',
  '\u0420': 'P',
  '\u0421': 'C',
  '\u0422': 'T',
  '\u0425': 'X',
  '\u0423': 'Y',
  '\u04AE': 'Y',
  '\u0405': 'S',
  '\u0406': 'I',
  '\u0408': 'J',
  '\u04C0': 'I',
  '\u051A': 'Q',
  '\u051C': 'W',
  // Greek, lower case
  '\u03B1': 'a',
  '\u03BF': 'o',
  '\u03C1': 'p',
  '\u03B9': 'i',
  '\u03BD': 'v',
  '\u03C5': 'u',
  '\u03B3': 'y',
  '\u03F2': 'c',
  '\u03F3': 'j',
  // Greek, upper case
  '\u0391': 'A',
  '\u0392': 'B',
  '\u0395': 'E',
  '\u0396': 'Z',
  '\u0397': 'H',
  '\u0399': 'I',
  '\u039A': 'K',
  '\u039C': 'M',
  '\u039D': 'N',
  '\u039F': 'O',
  '\u03A1': 'P',
  '\u03A4': 'T',
  '\u03A5': 'Y',
  '\u03A7': 'X',
  '\u03F9': 'C',
  // Armenian
  '\u0585': 'o',
  '\u057D': 'u',
  '\u0566': 'q',
  '\u0570': 'h',
  '\u0578': 'n',
  '\u054F': 'S',
  '\u0555': 'O',
  // Latin extended / IPA
  '\u0131': 'i',
  '\u0269': 'i',
  '\u0237': 'j',
  '\u0251': 'a',
  '\u0261': 'g',
};
