create table notes (id integer primary key, title text not null, body text not null, n integer not null);
with recursive s(i) as (select 1 union all select i + 1 from s where i < 1000)
insert into notes (id, title, body, n) select i, 'note ' || i, 'a body of some length for note ' || i, i % 7 from s;
