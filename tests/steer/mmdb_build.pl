#!/usr/bin/perl
# Builds a MaxMind DB for the tests and benchmarks with MaxMind's own writer
# (MaxMind::DB::Writer::Tree, Debian libmaxmind-db-writer-perl), from a JSON list of networks.
#
# Usage: mmdb_build.pl [--type city|asn] [--record-size 24|28|32] [--alias] OUT.mmdb NETWORKS.json
#   NETWORKS.json: [{"network": "198.51.100.0/24", "data": {...}}, ...]; `data` is laid out like
#   a GeoIP2-City record (country.iso_code, continent.code, subdivisions[].iso_code,
#   city.geoname_id and city.names.en, location.latitude/longitude) or, with --type asn, like a
#   GeoLite2-ASN record (autonomous_system_number, autonomous_system_organization). Each key
#   has the type MaxMind's databases give it (the table below); an unknown key is an error.
#   --alias: alias ::ffff:0:0/96 and 2002::/16 to the IPv4 tree, as MaxMind's own databases do.
#
# The tree keeps reserved networks (remove_reserved_networks => 0): the lab and the tests use
# documentation prefixes (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24, 2001:db8::/32), which
# the writer drops otherwise.
use strict;
use warnings;

use Getopt::Long;
use JSON::PP;
use MaxMind::DB::Writer::Tree;

my %TYPE = (
	# GeoIP2-City
	city                           => 'map',
	continent                      => 'map',
	country                        => 'map',
	registered_country             => 'map',
	location                       => 'map',
	names                          => 'map',
	subdivisions                   => [ 'array', 'map' ],
	code                           => 'utf8_string',
	iso_code                       => 'utf8_string',
	en                             => 'utf8_string',
	time_zone                      => 'utf8_string',
	geoname_id                     => 'uint32',
	accuracy_radius                => 'uint16',
	latitude                       => 'double',
	longitude                      => 'double',
	# GeoLite2-ASN
	autonomous_system_number       => 'uint32',
	autonomous_system_organization => 'utf8_string',
);

my ($type, $record_size, $alias) = ('city', 24, 0);
GetOptions('type=s' => \$type, 'record-size=i' => \$record_size, 'alias' => \$alias)
	and @ARGV == 2 and ($type eq 'city' or $type eq 'asn')
	or die "usage: mmdb_build.pl [--type city|asn] [--record-size 24|28|32] [--alias] OUT.mmdb NETWORKS.json\n";
my ($out, $in) = @ARGV;

my $tree = MaxMind::DB::Writer::Tree->new(
	ip_version               => 6,
	record_size              => $record_size,
	database_type            => $type eq 'asn' ? 'pop53-test-ASN' : 'pop53-test-City',
	languages                => ['en'],
	description              => { en => "pop53 test database ($type)" },
	remove_reserved_networks => 0,
	alias_ipv6_to_ipv4       => $alias,
	map_key_type_callback    => sub {
		my $t = $TYPE{ $_[0] };
		defined $t or die "mmdb_build.pl: $in: no type for key '$_[0]' (add it to %TYPE)\n";
		return $t;
	},
);

open(my $fh, '<', $in) or die "mmdb_build.pl: $in: $!\n";
my $nets = JSON::PP->new->decode(do { local $/; <$fh> });
close($fh);
ref $nets eq 'ARRAY' or die "mmdb_build.pl: $in: expected a list of {network, data}\n";
for my $e (@$nets) {
	defined $e->{network} && ref $e->{data} eq 'HASH'
		or die "mmdb_build.pl: $in: every entry needs \"network\" and a \"data\" map\n";
	$tree->insert_network($e->{network}, $e->{data});
}
open(my $o, '>:raw', "$out.tmp") or die "mmdb_build.pl: $out.tmp: $!\n";
$tree->write_tree($o);
close($o) or die "mmdb_build.pl: $out.tmp: $!\n";
rename("$out.tmp", $out) or die "mmdb_build.pl: $out: $!\n";
