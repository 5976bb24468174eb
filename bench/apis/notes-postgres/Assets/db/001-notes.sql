create table notes (id integer primary key, title text not null, body text not null, n integer not null);
insert into notes (id, title, body, n) select i, 'note ' || i, 'a body of some length for note ' || i, i % 7 from generate_series(1, 1000) as s(i);
