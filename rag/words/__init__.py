"""Words: which language a text is in (languages), its tokens and their weights (lexical), sentence boundaries
and code blocks (text), the numbers it states (numbers), and the other language's words for them — the
bilingual dictionary (bilingual), the knowledge base's own words for a question's (synonyms) and workplace
shorthand spelled out (jargon). Every other component reads text through these; they read none of them."""
