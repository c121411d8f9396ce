-- Term statistics of the episode index, for choosing selective query terms.
CREATE VIRTUAL TABLE episodes_vocab USING fts5vocab(episodes_fts, 'row');
